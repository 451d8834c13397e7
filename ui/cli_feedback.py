"""`eventbot feedback …`: the feedback kept on replies (the chat's thumbs, `POST /api/feedback`)."""

from pathlib import Path
from typing import Annotated

import typer

from ui.cli_base import Cli, fail

feedback_app = Cli(
    help="Feedback kept on the bot's replies (the chat's thumbs, POST /api/feedback).", no_args_is_help=True
)


@feedback_app.command("export")
def export_feedback(
    rating: Annotated[
        str | None, typer.Option("--rating", metavar="up|down", help="Only thumbs up, or only thumbs down.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write to this file (whole or not at all) instead of stdout.")
    ] = None,
) -> None:
    """Write kept feedback, oldest first, as an evaluation set to label: JSON Lines in `eventbot eval`'s format,
    with `answerable` null and what the bot replied (`given_answer`), the `rating` and the `comment`."""
    from bot.feedback import export_lines
    from bot.settings import Settings
    from index.files import write_whole

    settings = Settings()
    lines = export_lines(settings, rating)
    if not lines:
        typer.echo(
            f"eventbot: no {rating + ' ' if rating else ''}feedback kept in {settings.feedback_path}: nothing written",
            err=True,
        )
    elif out is None:
        typer.echo("".join(lines), nl=False)
    else:
        try:
            write_whole(out, "".join(lines))
        except OSError as exc:
            fail(f"cannot write {out} ({exc.strerror or exc})")
        typer.echo(
            f"wrote {len(lines)} question{'' if len(lines) == 1 else 's'} to {out}: fill in `answerable` (and `answers`) for each, then "
            f"`eventbot eval --dataset {out}`",
            err=True,
        )
