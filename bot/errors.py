"""The errors a caller of the bot (the CLI, the API, the chat) may catch, in one place.

They form one tree (`index.errors`): `EventbotError` with the branches `InputError` (what the user or client gave
is wrong), `UnavailableError` (a service or store is down or not ready) and `SetupError` (the installation or
configuration cannot work). `index` knows nothing of `bot`, so the tree and the errors raised down there are
defined there and re-exported here: `ui/` imports errors from this module and never from `index/`.

Two errors stay beside the commands that raise them, since importing them here would load what they need:
`bot.eval.items.EvaluationError` and `bot.training.fine_tune.CheckpointError`, both `InputError`s.
"""

from index.convert import ConversionError
from index.errors import (
    ConflictError,
    EventbotError,
    InputError,
    NotFoundError,
    PermissionDeniedError,
    SetupError,
    TooLargeError,
    UnavailableError,
    UnsupportedError,
)
from index.loaders import DocumentLoadError, FileTooLargeError, UnsupportedTypeError
from index.pdf import PdfTextError
from index.store import StoreUnavailableError

__all__ = [
    "CollectionNameError",
    "CollectionNotFoundError",
    "ConflictError",
    "ConversationNotFoundError",
    "ConversationStoreError",
    "ConversationUnavailableError",
    "ConversionError",
    "DocumentConflictError",
    "DocumentLoadError",
    "DocumentNotFoundError",
    "EventbotError",
    "FeedbackError",
    "FeedbackNotFoundError",
    "FeedbackStoreError",
    "FeedbackUnavailableError",
    "FileTooLargeError",
    "InputError",
    "LLMBusyError",
    "LLMSetupError",
    "NotFoundError",
    "NotReadyError",
    "PassageNotFoundError",
    "PdfTextError",
    "PermissionDeniedError",
    "QuestionError",
    "SetupError",
    "StoreUnavailableError",
    "TooLargeError",
    "UnavailableError",
    "UnsupportedError",
    "UnsupportedTypeError",
    "UploadsOffError",
]


class QuestionError(InputError, ValueError):
    """The question (or its history) is not something we can answer: empty, too long, malformed."""


class LLMSetupError(SetupError, RuntimeError):
    """The configured LLM cannot be used at all (missing extra, no model, bad GGUF path): a one-line reason."""


class LLMBusyError(UnavailableError):
    """More questions wait for the in-process LLM than `EVENTBOT_LLM_QUEUE` allows; `retry_after_s`: when one
    more is likely to get its turn."""

    def __init__(self, message: str, retry_after_s: int = 1):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class NotReadyError(UnavailableError):
    """The served bot has not answered its warm-up question yet."""


class DocumentConflictError(ConflictError):
    """A change to the documents that clashes with what is indexed: a name already there, the last document."""


class DocumentNotFoundError(NotFoundError):
    """No indexed document has that name."""


class CollectionNotFoundError(NotFoundError):
    """A collection the index does not have."""


class CollectionNameError(InputError, ValueError):
    """A name that cannot name a collection."""


class PassageNotFoundError(NotFoundError):
    """A cited chunk that is not in the named document (bot.source_passage.passage_of)."""


class UploadsOffError(PermissionDeniedError):
    """Documents may not be changed through the server: no API key, and `EVENTBOT_UPLOADS` is not on."""


class FeedbackError(InputError, ValueError):
    """Feedback that cannot be kept as sent: an empty answer, an over-long comment, a bad rating."""


class FeedbackNotFoundError(NotFoundError):
    """No kept feedback has that id."""


class FeedbackUnavailableError(UnavailableError):
    """The feedback file cannot be read or written now (locked by another writer past the timeout, disk full)."""


class FeedbackStoreError(SetupError):
    """The feedback file cannot be used at all: not an SQLite database, or made by a newer eventbot."""


class ConversationNotFoundError(NotFoundError):
    """The caller has no kept conversation of that id (none has, or another owner's)."""


class ConversationUnavailableError(UnavailableError):
    """The conversations file cannot be read or written now (locked by another writer past the timeout, disk full)."""


class ConversationStoreError(SetupError):
    """The conversations file cannot be used at all: not an SQLite database, or made by a newer eventbot."""
