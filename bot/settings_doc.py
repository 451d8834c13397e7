"""docs/settings.md, generated from `bot.settings.Settings`: `.venv/bin/python -m bot.settings_doc` writes it, and
tests/test_docs.py fails when the page and the code differ."""

import json
import types
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic.fields import FieldInfo

from bot.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "settings.md"

HEADER = """# Settings

Every setting is an environment variable (or a `NAME=value` line in a `.env` file in the working folder);
`bot/settings.py` is the one place their defaults live. This page is generated from it by
`.venv/bin/python -m bot.settings_doc` (do not edit it by hand; `tests/test_docs.py` fails when the two differ).
A list is set as JSON (`EVENTBOT_CORPUS='["a.txt", "notes/"]'`), a yes/no as `true`/`false` (or `on`/`off`).
What the settings do is told in context in the other pages: [models](models.md), [operations](operations.md),
[documents](documents.md), [the HTTP API](api.md).
"""


def _shown(value: Any) -> str:
    """A default as it would be written in the environment; paths inside the repository relative to it."""
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Path):
        return value.relative_to(ROOT).as_posix() if value.is_absolute() and value.is_relative_to(ROOT) else str(value)
    if isinstance(value, list | tuple):
        return json.dumps([_shown(item) for item in value])
    return str(value)


def _type(annotation: Any) -> str:
    """The kind of value a setting takes, in words: its choices for a Literal."""
    origin = get_origin(annotation)
    if origin is Literal:
        return " / ".join(f"`{choice}`" for choice in get_args(annotation))
    if origin in (Union, types.UnionType):
        kinds = [_type(arg) for arg in get_args(annotation) if arg is not type(None)]
        return " or ".join(kinds)
    if origin in (list, tuple):
        (item, *_) = get_args(annotation) or (Any,)
        return f"list of {_type(item)}"
    names = {bool: "yes/no", int: "integer", float: "number", str: "text", Path: "path"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _bounds(field: FieldInfo) -> str:
    signs = {Ge: ("≥", "ge"), Gt: (">", "gt"), Le: ("≤", "le"), Lt: ("<", "lt")}
    parts = []
    for constraint in field.metadata:
        for kind, (sign, attribute) in signs.items():
            if isinstance(constraint, kind):
                parts.append(f"{sign} {getattr(constraint, attribute)}")
    return ", ".join(parts)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def settings_markdown() -> str:
    """The settings page: one table row per field of Settings, in the class's order."""
    prefix = Settings.model_config.get("env_prefix", "")
    rows = [
        "| variable | takes | default | meaning |",
        "|---|---|---|---|",
    ]
    for name, field in Settings.model_fields.items():
        variable = f"{prefix}{name}".upper()
        takes = " ".join(part for part in (_type(field.annotation), _bounds(field)) if part)
        default = field.get_default(call_default_factory=True)
        shown = "unset" if default is None else f"`{_cell(_shown(default))}`"
        rows.append(f"| `{variable}` | {_cell(takes)} | {shown} | {_cell(field.description or '')} |")
    return HEADER + "\n" + "\n".join(rows) + "\n"


if __name__ == "__main__":
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(settings_markdown(), encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
