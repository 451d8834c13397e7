"""The errors a caller of the bot (the CLI, the API, the chat) may catch, in one place.

`index` knows nothing of `bot`, so the errors raised down there are defined there and re-exported here: `ui/`
imports them from this module and never from `index/`.
"""

from index.loaders import DocumentLoadError, FileTooLargeError, UnsupportedTypeError
from index.store import StoreUnavailableError

__all__ = [
    "DocumentConflictError",
    "DocumentLoadError",
    "DocumentNotFoundError",
    "FileTooLargeError",
    "LLMSetupError",
    "NotReadyError",
    "QuestionError",
    "StoreUnavailableError",
    "UnsupportedTypeError",
    "UploadsOffError",
]


class QuestionError(ValueError):
    """The question (or its history) is not something we can answer: empty, too long, malformed."""


class LLMSetupError(RuntimeError):
    """The configured LLM cannot be used at all (missing extra, no model, bad GGUF path): a one-line reason."""


class NotReadyError(Exception):
    """The served bot has not answered its warm-up question yet."""


class DocumentConflictError(Exception):
    """A change to the documents that clashes with what is indexed: a name already there, the last document."""


class DocumentNotFoundError(Exception):
    """No indexed document has that name."""


class UploadsOffError(Exception):
    """Documents may not be changed through the server: no API key, and `EVENTBOT_UPLOADS` is not on."""
