"""The one error tree (index.errors, gathered in bot.errors) and its two mappings: the CLI's exit codes (ui.cli) and
the API's statuses (ui.errors). Each error raised on purpose maps to its documented code; an error class added
later gets the code of its branch; every error class of the project is listed here, so a new one is a decision."""

import httpx
import pytest
import typer
from fastapi import FastAPI
from fastapi.testclient import TestClient

from bot.errors import (
    CollectionNameError,
    CollectionNotFoundError,
    ConflictError,
    ConversationNotFoundError,
    ConversationStoreError,
    ConversationUnavailableError,
    ConversionError,
    DocumentConflictError,
    DocumentLoadError,
    DocumentNotFoundError,
    EventbotError,
    FeedbackError,
    FeedbackNotFoundError,
    FeedbackStoreError,
    FeedbackUnavailableError,
    FileTooLargeError,
    InputError,
    LLMBusyError,
    LLMSetupError,
    NotFoundError,
    NotReadyError,
    PassageNotFoundError,
    PdfTextError,
    PermissionDeniedError,
    QuestionError,
    SetupError,
    StoreUnavailableError,
    TooLargeError,
    UnavailableError,
    UnsupportedError,
    UnsupportedTypeError,
    UploadsOffError,
)
from bot.eval.running import EvaluationError
from bot.training.fine_tune import CheckpointError
from ui.cli import app as cli_app
from ui.cli_base import reports_errors
from ui.errors import install_error_handlers

# error → (exit code of a CLI command failing with it, HTTP status of a request failing with it)
EXPECTED: dict[type[EventbotError], tuple[int, int]] = {
    QuestionError: (2, 422),
    DocumentLoadError: (2, 422),
    PdfTextError: (2, 422),
    EvaluationError: (2, 422),
    CheckpointError: (2, 422),
    UploadsOffError: (2, 403),
    DocumentNotFoundError: (2, 404),
    DocumentConflictError: (2, 409),
    FileTooLargeError: (2, 413),
    UnsupportedTypeError: (2, 415),
    StoreUnavailableError: (2, 503),
    NotReadyError: (2, 503),
    LLMBusyError: (2, 503),  # more questions wait for the LLM than EVENTBOT_LLM_QUEUE; with Retry-After
    LLMSetupError: (2, 500),  # the server cannot work as configured: a fault of its own, logged
    FeedbackError: (2, 422),
    FeedbackNotFoundError: (2, 404),
    PassageNotFoundError: (2, 404),
    FeedbackUnavailableError: (2, 503),
    FeedbackStoreError: (2, 500),  # a feedback file of a newer eventbot, or not SQLite: the server cannot start
    ConversionError: (2, 422),  # a Word, PowerPoint, Excel or EPUB file that cannot be read
    CollectionNameError: (2, 422),
    CollectionNotFoundError: (2, 404),
    ConversationNotFoundError: (2, 404),
    ConversationUnavailableError: (2, 503),
    ConversationStoreError: (2, 500),  # a conversations file of a newer eventbot, or not SQLite
}
BRANCHES: dict[type[EventbotError], tuple[int, int]] = {
    InputError: (2, 422),
    PermissionDeniedError: (2, 403),
    NotFoundError: (2, 404),
    ConflictError: (2, 409),
    TooLargeError: (2, 413),
    UnsupportedError: (2, 415),
    UnavailableError: (2, 503),
    SetupError: (2, 500),
}
INTERNAL = {"detail": "internal error ({}); see the server log"}


def subclasses(cls: type) -> set[type]:
    return {sub for direct in cls.__subclasses__() for sub in {direct} | subclasses(direct)}


def test_every_error_class_is_listed():
    defined = {c for c in subclasses(EventbotError) if not c.__module__.startswith("tests.")}
    assert defined == set(EXPECTED) | set(BRANCHES)


def test_errors_keep_their_older_bases():
    """Callers may still catch these as the built-in errors they were."""
    assert issubclass(QuestionError, ValueError) and issubclass(EvaluationError, ValueError)
    assert issubclass(LLMSetupError, RuntimeError) and issubclass(CheckpointError, RuntimeError)
    assert issubclass(FileTooLargeError, DocumentLoadError) and issubclass(UnsupportedTypeError, DocumentLoadError)


def new_subclass(branch: type[EventbotError]) -> type[EventbotError]:
    return type(f"New{branch.__name__}", (branch,), {"__module__": "tests.new"})


CASES = [pytest.param(error, codes, id=error.__name__) for error, codes in EXPECTED.items()] + [
    pytest.param(new_subclass(branch), codes, id=f"new {branch.__name__}") for branch, codes in BRANCHES.items()
]


# ---------------------------------------------------------------------------------------------- the CLI


@pytest.mark.parametrize(("error", "codes"), CASES)
def test_cli_maps_error_to_exit_code(error, codes, capsys):
    @reports_errors
    def command() -> None:
        raise error("a reason the user can act on")

    with pytest.raises(typer.Exit) as exited:
        command()
    assert exited.value.exit_code == codes[0]
    assert capsys.readouterr().err == "eventbot: a reason the user can act on\n"


def test_cli_leaves_other_exceptions_alone():
    @reports_errors
    def command() -> None:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        command()


def test_every_cli_command_has_the_handler():
    commands = cli_app.registered_commands
    assert len(commands) >= 7
    assert all(getattr(c.callback, "__wrapped__", None) for c in commands), [c.name for c in commands]


# ---------------------------------------------------------------------------------------------- the API


def app_raising(exc: Exception) -> TestClient:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/fail")
    def fail() -> None:
        raise exc

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(("error", "codes"), CASES)
def test_api_maps_error_to_status(error, codes):
    response = app_raising(error("a reason  for the\nclient")).get("/fail")
    assert response.status_code == codes[1]
    if codes[1] == 500:
        assert response.json() == {"detail": INTERNAL["detail"].format(error.__name__)}
    elif codes[1] == 503:
        assert response.json() == {"detail": "a reason  for the\nclient"}  # store_reason, as it was
    else:
        assert response.json() == {"detail": "a reason for the client"}  # one line


def test_api_says_when_the_store_timed_out():
    try:
        try:
            raise httpx.ReadTimeout("timed out")
        except httpx.ReadTimeout as timeout:
            raise StoreUnavailableError("cannot read the index: timed out") from timeout
    except StoreUnavailableError as exc:
        error = exc
    response = app_raising(error).get("/fail")
    assert response.status_code == 503
    assert response.json() == {
        "detail": "cannot read the index: timed out (the store did not answer within EVENTBOT_STORE_TIMEOUT_S)"
    }
