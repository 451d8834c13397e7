"""Feedback on replies over HTTP: a thin router over the server's one `bot.feedback.FeedbackStore`
(`app.state.feedback`, made by `ui.server.build_api`), which the chat's thumbs write to as well.

- `POST /api/feedback` — a thumb up or down on a reply (and a comment) → the kept item.
- `GET /api/feedback` — kept feedback, newest first, a page at a time, optionally of one rating.
"""

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query, Request
from pydantic import BaseModel

from bot.feedback import EXAMPLE, Feedback, FeedbackIn, FeedbackStore, Rating
from ui.errors import ERROR_RESPONSES

MAX_PER_PAGE = 200

feedback_router = APIRouter(prefix="/api", tags=["feedback"], responses=ERROR_RESPONSES)


def get_feedback(request: Request) -> FeedbackStore:
    return request.app.state.feedback


class FeedbackPage(BaseModel):
    feedback: list[Feedback]
    page: int
    per_page: int
    total: int


FEEDBACK_EXAMPLES = {
    "down": {"summary": "A thumb down, with a comment", "value": EXAMPLE},
    "up": {
        "summary": "A thumb up on a follow-up",
        "value": {
            "question": "How old is she?",
            "answer": "Kaori Sakamoto is 25 [1].",
            "rating": "up",
            "history": [
                {"role": "user", "content": "Who won silver?"},
                {"role": "assistant", "content": "Kaori Sakamoto won the silver medal [1]."},
            ],
        },
    },
}


@feedback_router.post("/feedback", response_model=Feedback)
def add_feedback(
    body: Annotated[FeedbackIn, Body(openapi_examples=FEEDBACK_EXAMPLES)],
    store: Annotated[FeedbackStore, Depends(get_feedback)],
) -> Feedback:
    """Keep a thumb up or down on a reply; the kept item (with its `id`, `created_at` and what answered: the
    code's `commit`, the `reader` weights, the `backend`).

    Example request:

        curl -s localhost:7860/api/feedback -H 'Content-Type: application/json' \\
             -d '{"question": "Who won the gold medal?", "answer": "Kaori Sakamoto won the silver medal [1].",
                  "rating": "down", "comment": "It asked about gold."}'

    It is on disk when this returns. 422 (and nothing kept) for an unknown field, a rating other than `up` or
    `down`, an empty question or answer, or a question, history or comment over its limit.
    """
    return store.add(body)


@feedback_router.get("/feedback", response_model=FeedbackPage)
def list_feedback(
    store: Annotated[FeedbackStore, Depends(get_feedback)],
    page: Annotated[int, Query(ge=1, description="The page, from 1")] = 1,
    per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE, description="Items a page")] = 50,
    rating: Annotated[Rating | None, Query(description="Only thumbs up, or only thumbs down")] = None,
) -> FeedbackPage:
    """Kept feedback, newest first, a page at a time; `total` counts all of it (of that rating).

    Example request:

        curl -s 'localhost:7860/api/feedback?rating=down&page=1&per_page=50'

    To turn it into an evaluation set, use `eventbot feedback export --rating down --out FILE` instead.
    """
    items, total = store.page(page, per_page, rating)
    return FeedbackPage(feedback=items, page=page, per_page=per_page, total=total)
