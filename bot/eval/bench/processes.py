"""Starting, timing and stopping the processes the bench measures: `eventbot` commands, `eventbot serve` and
`chroma run` servers (each in a process group of its own, stopped from a `finally` block, by an `atexit` hook, and on
Linux when the process that started it dies), with their environment, memory and process tree."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.settings import Settings

EVENTBOT = str(Path(sys.executable).parent / "eventbot")
SERVER_START_TIMEOUT_S = 600.0


def eventbot_env(settings: Settings) -> dict[str, str]:
    """The environment of an `eventbot` process over `settings`' index (embedded, or on a Chroma server), no key,
    no rate limit; uploads on (kept in `settings.uploads_dir`) when `settings.uploads` is."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVENTBOT_")}
    if settings.chroma_url:
        env["EVENTBOT_CHROMA_URL"] = settings.chroma_url
    if settings.uploads == "on":
        env |= {"EVENTBOT_UPLOADS": "on", "EVENTBOT_UPLOADS_DIR": str(settings.uploads_dir)}
    return env | {
        "EVENTBOT_INDEX_DIR": str(settings.index_dir),
        "EVENTBOT_COLLECTION": settings.collection,
        "EVENTBOT_LLM": settings.llm,
        "EVENTBOT_RATE_LIMIT": "0",
        "HF_HUB_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }


def timed_run(args: list[str], env: dict[str, str]) -> float:
    return timed_output(args, env)[0]


def timed_output(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds a process took, and what it printed on stdout; RuntimeError if it failed."""
    t0 = time.perf_counter()
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=SERVER_START_TIMEOUT_S)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args[:3])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return seconds, proc.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LiveServer:
    proc: subprocess.Popen
    url: str
    first_200_s: float

    def peak_rss_mb(self) -> float:
        """Peak resident memory (VmHWM) of the server and its worker processes, added up."""
        return round(sum(_peak_rss_kb(pid) for pid in _process_tree(self.proc.pid)) / 1024, 1)


def _process_tree(pid: int) -> list[int]:
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                pids += _process_tree(int(child))
    return pids


def _peak_rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _raise_system_exit(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)  # the shell's exit status for a death by that signal


@contextlib.contextmanager
def stop_on_termination() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise SystemExit in the main thread (as Ctrl-C raises KeyboardInterrupt), so
    that `finally` blocks run: servers are stopped, temporary folders removed. Nothing changes outside the main thread
    or for a signal that already has a handler other than the default."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            previous[sig] = signal.signal(sig, _raise_system_exit)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_SERVER_GROUPS: set[int] = set()  # process groups of the servers started here and not yet stopped
PR_SET_PDEATHSIG = 1


def _group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of a process group (without /proc: the group's id while it has any)."""
    if not Path("/proc/self/stat").exists():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (command)": state, ppid, pgrp, …
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(stat.parent.name))
    return members


def _kill_group(pgid: int) -> None:
    """SIGKILL whatever is left of a server's process group."""
    if _group_members(pgid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def _stop_server(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    """Ctrl-C to `eventbot serve` (it stops its workers itself), then SIGKILL to anything left of its group."""
    try:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace_s)
        deadline = time.monotonic() + grace_s
        while _group_members(proc.pid) and time.monotonic() < deadline:  # workers the server left behind
            time.sleep(0.05)
    finally:
        _kill_group(proc.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace_s)
        _SERVER_GROUPS.discard(proc.pid)


@atexit.register
def _kill_servers_left() -> None:
    """A second signal can cut a `finally` block short: no server outlives this process."""
    for pgid in list(_SERVER_GROUPS):
        _kill_group(pgid)


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """On Linux, for the child between fork and exec: SIGTERM when its parent dies (even by SIGKILL; strictly, when
    the thread that started it ends, which a `with live_server(…)` block outlives)."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork

    def child() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != parent:  # the parent died before the line above
            os.kill(os.getpid(), signal.SIGTERM)

    return child


@contextlib.contextmanager
def live_server(settings: Settings, workers: int = 1, env: dict[str, str] | None = None) -> Iterator[LiveServer]:
    """`eventbot serve` in a subprocess on a free loopback port (`env`: settings beside the index's, e.g. the LLM),
    up once /healthz answers 200; stopped after, also when this process is killed from outside (see the module's
    docstring)."""

    port = _free_port()
    args = [EVENTBOT, "serve", "--host", "127.0.0.1", "--port", str(port)]
    if workers > 1:
        args += ["--workers", str(workers)]
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    with _server(args, eventbot_env(settings) | (env or {}), f"{url}/healthz") as proc:
        yield LiveServer(proc, url, time.perf_counter() - t0)


@contextlib.contextmanager
def chroma_server(folder: Path) -> Iterator[str]:
    """A real `chroma run` on a free loopback port, holding its data in `folder`; yields its URL. Stopped after, as
    the `eventbot serve` processes are (also when this process is killed)."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    chroma = str(Path(sys.executable).parent / "chroma")
    args = [chroma, "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)]
    with _server(args, None, f"{url}/api/v2/heartbeat"):
        yield url


@contextlib.contextmanager
def _server(args: list[str], env: dict[str, str] | None, ready_url: str) -> Iterator[subprocess.Popen]:
    """A server process in a process group of its own (with its workers: Ctrl-C reaches the bench only, which stops
    it), up once `ready_url` answers 200; stopped after, also when this process is killed from outside."""
    import httpx

    name = " ".join(Path(a).name for a in args[:2])
    t0 = time.perf_counter()
    with stop_on_termination(), tempfile.TemporaryFile("w+") as stderr:  # a pipe nobody reads could fill up
        proc = subprocess.Popen(
            args,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
            process_group=0,
            preexec_fn=_die_with_parent(os.getpid()),
        )
        _SERVER_GROUPS.add(proc.pid)
        try:
            while True:
                if proc.poll() is not None:
                    stderr.seek(0)
                    raise RuntimeError(f"{name} exited ({proc.returncode}): {stderr.read().strip()[-500:]}")
                if time.perf_counter() - t0 > SERVER_START_TIMEOUT_S:
                    raise RuntimeError(f"{name} did not answer {ready_url} in time")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(ready_url, timeout=5).status_code == 200:
                        break
                time.sleep(0.05)
            yield proc
        finally:
            _stop_server(proc)
