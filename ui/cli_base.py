"""What every `eventbot` command shares: the one error handler (an error of the tree ends a command with one line
on stderr and its exit code) and Typer wrapping every command in it."""

import functools
from collections.abc import Callable
from typing import Any, NoReturn

import typer


def exit_code(exc: BaseException) -> int | None:
    """The exit code of a command failing with `exc`: that of its branch of the error tree (bot.errors), None for
    an exception outside the tree (a bug: its traceback is shown). The contract: 2 with a one-line reason, for all
    that the user can do something about (a bad question or option, no index yet, an unreadable file, a server
    down, an LLM not set up)."""
    from bot.errors import InputError, SetupError, UnavailableError

    codes = {InputError: 2, UnavailableError: 2, SetupError: 2}
    return next((codes[cls] for cls in type(exc).__mro__ if cls in codes), None)


def settings_error(exc: BaseException) -> Exception | None:
    """A setting that is not valid (EVENTBOT_TOP_K=abc, a collection name Chroma cannot take) as an InputError of
    one line naming its variable; None for any other exception."""
    from pydantic import ValidationError

    from bot.errors import InputError

    if not isinstance(exc, ValidationError) or exc.title != "Settings":
        return None
    first = exc.errors()[0]
    name = "EVENTBOT_" + "_".join(str(part) for part in first["loc"]).upper()
    return InputError(f"{name}={first.get('input')!r} is not a valid setting: {first['msg']}")


def print_error(exc: BaseException) -> None:
    typer.echo(f"eventbot: {exc}", err=True)


def reports_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """The CLI's one error handler: an error of the tree ends the command with one line on stderr and its exit
    code."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except Exception as raised:
            exc = settings_error(raised) or raised
            code = exit_code(exc)
            if code is None:
                raise
            print_error(exc)
            raise typer.Exit(code) from None

    return run


class Cli(typer.Typer):
    """Typer, with every command wrapped in `reports_errors`."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        register = super().command(*args, **kwargs)
        return lambda command: register(reports_errors(command))


def fail(message: str) -> NoReturn:
    """A user error found by the CLI itself (options that do not go together, a port taken): one line on stderr,
    exit code 2, through `reports_errors` like any other."""
    from bot.errors import InputError

    raise InputError(message)
