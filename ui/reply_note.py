"""What the chat and `eventbot ask` show above an abstained reply: why it is not an answer."""

from bot.types import Answer


def note_of(answer: Answer) -> str:
    """Why an abstained reply is not an answer ("" for an answer): unsure (it quotes the closest passage) or
    not found in the documents, with the decision's confidence when there is one."""
    if not answer.abstained:
        return ""
    p = answer.confidence
    if answer.citations:
        sure = f" (confidence {p:.0%})" if p is not None else ""
        return f"Unsure{sure}: not answered. Open the quoted passage to judge for yourself."
    closest = f" (the closest reading: confidence {p:.0%})" if p is not None and p >= 0.01 else ""
    return f"Not found in the documents{closest}."
