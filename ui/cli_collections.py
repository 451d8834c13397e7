"""`eventbot collections …`: the index's collections (each a separate set of documents a question may name), listed
and removed whole."""

import json
from typing import Annotated

import typer

from ui.cli_base import Cli

collections_app = Cli(help="The index's collections: list them, remove one whole.", no_args_is_help=True)
AsJson = Annotated[bool, typer.Option("--json", help="One JSON object.")]


@collections_app.command("list")
def list_collections(as_json: AsJson = False) -> None:
    """The index's collections, with how many documents and chunks each holds."""
    from bot.indexing import collections
    from bot.settings import Settings

    found = collections(Settings())
    if as_json:
        return typer.echo(json.dumps({"collections": found}))
    for c in found:
        typer.echo(f"{c['name']}: {c['documents']} document(s), {c['chunks']} chunks")


@collections_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="The collection to remove.")], as_json: AsJson = False) -> None:
    """Remove a collection whole: its chunks, what was learnt of it, the LLM's saved readings of its documents, and
    its uploaded files that no other collection holds. The other collections' answers are unchanged."""
    from bot.indexing import remove_collection
    from bot.settings import Settings

    removed = remove_collection(Settings(), name)
    if as_json:
        return typer.echo(json.dumps(removed.as_dict()))
    typer.echo(
        f"Removed collection {removed.name}: {removed.documents} document(s), {removed.chunks} chunks, "
        f"{removed.uploads} uploaded file(s)."
    )
