"""The one tree of errors eventbot raises on purpose, at the bottom layer so that `index` and `bot` both build on it
(as httpx's `_exceptions.py` does). A caller catches a branch, not a list of classes:

    EventbotError
    ├── InputError             what the user or client gave is wrong (a question, a file, a name, an option)
    │   ├── PermissionDeniedError  not allowed here
    │   ├── NotFoundError          names nothing that exists
    │   ├── ConflictError          clashes with what is there
    │   ├── TooLargeError          over a size limit
    │   └── UnsupportedError       of a kind that is not read
    ├── UnavailableError       a service or store is down or not ready: the same request may work later
    └── SetupError             the installation or configuration cannot work: change it, then try again

The errors themselves live where they are raised and subclass one of these (`bot.errors` gathers them for `ui/`);
`ui/cli.py` maps a branch to an exit code and `ui/errors.py` to an HTTP status, each in one table.
"""

__all__ = [
    "ConflictError",
    "EventbotError",
    "InputError",
    "NotFoundError",
    "PermissionDeniedError",
    "SetupError",
    "TooLargeError",
    "UnavailableError",
    "UnsupportedError",
]


class EventbotError(Exception):
    """Something eventbot refuses or cannot do, with a one-line reason meant for the user."""


class InputError(EventbotError):
    """What the user or client gave is wrong: asking again the same way fails again."""


class PermissionDeniedError(InputError):
    """Not allowed with this server's settings."""


class NotFoundError(InputError):
    """Names something that does not exist."""


class ConflictError(InputError):
    """Clashes with what is there already."""


class TooLargeError(InputError):
    """Over a size limit."""


class UnsupportedError(InputError):
    """Of a kind that is not read."""


class UnavailableError(EventbotError):
    """A service or store is down, unreachable or not ready yet."""


class SetupError(EventbotError):
    """The installation or configuration cannot work as it is."""
