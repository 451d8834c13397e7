"""The local LLM's own speed, the floor any answer the LLM reads is measured against: llama-cpp-python alone, the
file and threads the bot loads (`bot.answer.llamacpp.load_llama`), the article first in the system message and the
question last, so that after the first question llama.cpp reuses the article's cached prefix and a new question
costs only its own tokens and the answer's. Then the same model behind `eventbot serve`, against that floor and
under bursts."""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.eval.bench.corpora import ARTICLE
from bot.eval.bench.figures import BenchResult, SectionSkipped, Sizes, ms, pct, ratio
from bot.eval.bench.load import ask_all, stream_answer
from bot.eval.bench.processes import live_server
from bot.eval.bench.questions import article_items, new_questions, overview_questions, warm_up_questions
from bot.settings import Settings

SECTION = "the local LLM alone: prefill, decode, a question over the cached article"
ANSWER_TOKENS = 24  # about a short answer with its citation
SYSTEM = "Answer the question from the article in one short sentence. If the article does not say, reply: I don't know."


def cpu_flags() -> str:
    """The CPU's vector and matrix flags that llama.cpp's kernels use."""
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16", "avx_vnni")
    try:
        line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines() if x.startswith("flags"))
    except (OSError, StopIteration):
        return "unknown"
    return " ".join(flag for flag in wanted if flag in line.split()) or "none of AVX2/AVX-512/AMX"


def measure_llm_floor(result: BenchResult, sizes: Sizes, model: Path | None = None) -> None:
    """Prefill and decode tokens/s, and a new question's latency over the cached article (`model`: the installed
    LLM by default; skipped when it is not installed), with the CPU's flags in the notes."""
    from bot.answer.llamacpp import load_llama, turns_of
    from bot.errors import LLMSetupError
    from bot.llm_file import installed

    try:
        path = model or installed()
        llama = load_llama(str(path))
    except LLMSetupError as exc:
        raise SectionSkipped(str(exc)) from exc
    with turns_of(llama).lock:  # the model is this process's: a bot in it waits while the floor is measured
        _measure_floor(result, sizes, llama, path)


def _measure_floor(result: BenchResult, sizes: Sizes, llama: Any, path: Path) -> None:
    f = result.figures
    article = ARTICLE.read_text(encoding="utf-8")
    system = {"role": "system", "content": f"{SYSTEM}\n\n<article>\n{article}\n</article>"}

    def ask(question: str, max_tokens: int) -> tuple[float, dict]:
        started = time.perf_counter()
        reply = llama.create_chat_completion(
            messages=[system, {"role": "user", "content": question}], temperature=0.0, max_tokens=max_tokens
        )
        return time.perf_counter() - started, reply["usage"]

    llama.reset()  # nothing cached: the first call reads the whole article
    seconds, usage = ask("Who won?", 1)
    f["llm_prompt_tokens"] = usage["prompt_tokens"]
    f["llm_prefill_tokens_per_s"] = round(usage["prompt_tokens"] / seconds, 1)
    f["llm_prefill_article_s"] = round(seconds, 2)
    # The same prompt again: its prefix is cached, so the time is the answer's tokens (decode)
    seconds, usage = ask("Who won?", ANSWER_TOKENS)
    f["llm_decode_tokens_per_s"] = round(usage["completion_tokens"] / seconds, 1)
    questions = [item.question for item in article_items()][: 4 if sizes.quick else 16]
    times = [ask(question, ANSWER_TOKENS)[0] for question in questions]
    f["llm_questions"] = len(times)
    f["llm_floor_question_p50_ms"] = ms(statistics.median(times))
    f["llm_floor_question_p95_ms"] = pct([t * 1000 for t in times], 95)
    f["llm_threads"] = llama.n_threads
    f["llm_model_mb"] = round(path.stat().st_size / 1e6)
    result.notes["llm_cpu_flags"] = cpu_flags()


SERVER_SECTION = "live server with the local LLM: new questions against the floor, two bursts"


def measure_llm_server(
    f: dict,
    settings: Settings,
    model: Path | None = None,
    sequential: int = 8,
    popular_requests: int = 300,
    distinct: int = 40,
) -> None:
    """`eventbot serve` with `EVENTBOT_LLM=llamacpp` (ready once its warm-up answer has read the article; started
    again, once it has loaded that reading, bot.answer.prompt_states): the first question after ready and
    `sequential` new ones one at a time (p50 against the floor); the overview questions of the article's overview
    sets streamed over `/v1/chat/completions`, to the first words and to the end, and so their other questions (the
    LLM's answers of several sentences, each sentence sent once it holds); then `popular_requests`
    at concurrency 12 over four questions (the answer cache makes that four generations), and `distinct` new
    questions at concurrency 8, each of which should be a 200 or, while the LLM's queue is full, a 503 with
    Retry-After, none slower than the LLM's timeout + 10 s."""
    from bot.errors import LLMSetupError
    from bot.llm_file import installed

    try:
        path = model or installed()
    except LLMSetupError as exc:
        raise SectionSkipped(str(exc)) from exc
    asked = new_questions(1 + sequential + distinct, offset=1000)  # none of the other sections' questions
    first, one_by_one, burst = asked[0], asked[1 : 1 + sequential], asked[1 + sequential :]
    popular = warm_up_questions()[:4]
    # none saved before: the first server reads the article; started again, it loads what it read
    states = tempfile.mkdtemp(prefix="eventbot-bench-llm-states-")
    env = {"EVENTBOT_LLM": "llamacpp", "EVENTBOT_LLM_MODEL": str(path), "EVENTBOT_LLM_STATE_DIR": states}
    with live_server(settings, env=env) as server:
        f["llm_serve_first_200_s"] = round(server.first_200_s, 2)
        [first_reply] = ask_all(server.url, [first], 1)
        warm = ask_all(server.url, one_by_one, 1)
        overviews = [stream_answer(server.url, question) for question in overview_questions()]
        long_answers = [stream_answer(server.url, question) for question in overview_questions(overviews=False)]
        popular_replies = ask_all(server.url, [popular[n % len(popular)] for n in range(popular_requests)], 12)
        burst_replies = ask_all(server.url, burst, 8)
    with live_server(settings, env=env) as server:
        f["llm_serve_restart_200_s"] = round(server.first_200_s, 2)
    shutil.rmtree(states, ignore_errors=True)
    f["llm_serve_first_question_ms"] = first_reply.ms
    f["llm_serve_question_p50_ms"] = pct([r.ms for r in warm], 50)
    f["llm_serve_errors"] = 1 + sequential - sum(r.status == 200 for r in [first_reply, *warm])
    f["llm_serve_first_vs_warm"] = ratio(first_reply.ms, f["llm_serve_question_p50_ms"])
    for name, streamed in (("overview", overviews), ("long", long_answers)):
        f[f"llm_{name}_questions"] = len(streamed)
        f[f"llm_{name}_errors"] = sum(o.status != 200 for o in streamed)
        f[f"llm_{name}_first_p50_ms"] = pct([o.first_ms for o in streamed], 50)
        f[f"llm_{name}_whole_p50_ms"] = pct([o.whole_ms for o in streamed], 50)
    f["llm_serve_vs_floor"] = ratio(f["llm_serve_question_p50_ms"], f.get("llm_floor_question_p50_ms"))
    f["llm_popular_requests_c12"] = popular_requests
    f["llm_popular_errors_c12"] = popular_requests - sum(r.status == 200 for r in popular_replies)
    f["llm_burst_questions_c8"] = len(burst)
    f["llm_burst_200"] = sum(r.status == 200 for r in burst_replies)
    f["llm_burst_503_retry_after"] = sum(r.status == 503 and r.retry_after for r in burst_replies)
    f["llm_burst_other"] = len(burst) - f["llm_burst_200"] - f["llm_burst_503_retry_after"]  # a lost one too
    f["llm_burst_max_ms"] = max(r.ms for r in burst_replies)
    f["llm_burst_limit_ms"] = ms(settings.llm_timeout_s + 10)


DOCUMENTS_SECTION = "the local LLM over 13 documents: a new question against the article alone"


def measure_llm_documents(
    f: dict, root: Path, corpus: list[Path], model: Path | None = None, documents: int = 12, questions: int = 63
) -> None:
    """The article alone, then the article among `documents` generated reports (together too long for one prompt:
    the LLM reads the best passage's whole document), each in an index and a bot of its own with the local LLM; the
    article's own questions asked once after a warm-up: p50 / p95 and accuracy / wrong of each, and the p50 ratio.
    Then the same 13 documents once the LLM has read each ahead of the questions, as a served bot has it do after
    its warm-up (`llm_ahead_*`, and the seconds that reading took)."""
    from bot.errors import LLMSetupError
    from bot.eval.metrics import score_item, summarize
    from bot.event_bot import EventBot
    from bot.indexing import build_index
    from bot.llm_file import installed

    try:
        path = model or installed()
    except LLMSetupError as exc:
        raise SectionSkipped(str(exc)) from exc
    items = article_items()[:questions]
    every = [*corpus[:documents], ARTICLE]
    for label, paths in (("llm_article_", [ARTICLE]), ("llm_docs_", every), ("llm_ahead_", every)):
        index = "llm_docs_" if label == "llm_ahead_" else label  # the 13 documents are indexed once for both
        settings = Settings(
            index_dir=root / index / "index",
            llm_state_dir=root / label / "llm-states",  # none saved before: each document is read once here
            chroma_url=None,
            collection="bench",
            llm="llamacpp",
            llm_model=str(path),
        )
        if index == label:
            build_index(settings, paths)
        bot = EventBot(settings)
        bot.ask(warm_up_questions()[0])
        if label == "llm_ahead_":
            started = time.perf_counter()
            bot.read_ahead()
            f["llm_ahead_read_s"] = round(time.perf_counter() - started, 3)
        times, scored = [], []
        for item in items:
            started = time.perf_counter()
            answer = bot.ask(item.question)
            times.append((time.perf_counter() - started) * 1000)
            scored.append(score_item(item, answer))
        f[f"{label}documents"] = len(paths)
        f[f"{label}chars"] = sum(len(p.read_text(encoding="utf-8")) for p in paths)
        f[f"{label}question_p50_ms"] = pct(times, 50)
        f[f"{label}question_p95_ms"] = pct(times, 95)
        figures = summarize(scored)
        f[f"{label}accuracy"] = round(figures["accuracy"], 3)
        f[f"{label}wrong"] = round(figures["wrong_rate"], 3)
        f[f"{label}declined"] = round(sum(r.abstained for r in scored) / len(scored), 3)
    f["llm_docs_vs_article"] = ratio(f["llm_docs_question_p50_ms"], f["llm_article_question_p50_ms"])
    f["llm_ahead_p95_vs_article"] = ratio(f["llm_ahead_question_p95_ms"], f["llm_article_question_p95_ms"])
