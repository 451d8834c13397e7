"""The OpenAI-compatible API, so OpenAI clients work unchanged: `POST /v1/chat/completions` (plain or streamed as
server-sent events) and `GET /v1/models`. A thin router over the same `ServedBot.ask` as `/api/ask`."""

import itertools
import json
import logging
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends
from fastapi.sse import EventSourceResponse, format_sse_event
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from bot.errors import QuestionError
from bot.questions import check_question
from bot.serving import ServedBot
from bot.settings import Settings
from bot.types import Answer, CheckedQuestion, Citation, Turn
from ui.api import get_bot
from ui.errors import ERROR_RESPONSES

log = logging.getLogger(__name__)

MODEL_ID = "eventbot"


openai_router = APIRouter(prefix="/v1", tags=["openai"], responses=ERROR_RESPONSES)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "text"
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(part.text or "" for part in self.content if part.type == "text")
        return self.content or ""


CHAT_EXAMPLES = {
    "plain": {
        "summary": "One question",
        "value": {"model": "eventbot", "messages": [{"role": "user", "content": "Who won the gold medal?"}]},
    },
    "streamed follow-up": {
        "summary": "A follow-up, streamed as server-sent events",
        "value": {
            "model": "eventbot",
            "stream": True,
            "messages": [
                {"role": "user", "content": "Who won silver?"},
                {"role": "assistant", "content": "Kaori Sakamoto won the silver medal [1]."},
                {"role": "user", "content": "How old is she?"},
            ],
        },
    },
}


class ChatCompletionRequest(BaseModel):
    """OpenAI's chat request. Sampling options (temperature, max_tokens, …) are accepted and ignored."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={"examples": [example["value"] for example in CHAT_EXAMPLES.values()]},
    )
    model: str = Field(
        MODEL_ID,
        description="A collection of the index (see GET /v1/models) answers from that collection; any other name is "
        "accepted and answers from the server's",
    )
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


class CompletionMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: CompletionMessage
    finish_reason: Literal["stop"] = "stop"
    logprobs: None = None


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str = MODEL_ID
    choices: list[Choice]
    citations: list[Citation] = Field(description="Added to OpenAI's schema: the passages behind the `[n]` markers")


class Model(BaseModel):
    id: str = MODEL_ID
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = "eventbot"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[Model]


def split_chat(messages: list[ChatMessage], settings: Settings) -> CheckedQuestion:
    """The last user message is the question; earlier user and assistant messages are its history."""
    if messages[-1].role != "user":
        raise QuestionError("the last message must come from the user: it is the question")
    # Every earlier message counts toward the history limits, also those (system, tool…) the bot then ignores
    earlier = [Turn(role="user", content=m.text()) for m in messages[:-1]]
    checked = check_question(settings, messages[-1].text(), earlier)
    history = tuple(Turn(role=m.role, content=m.text()) for m in messages[:-1] if m.role in ("user", "assistant"))
    return replace(checked, history=history)


def rest_of(answer: str, sent: str) -> str:
    """What of the answer's text is still to send after the sentences already sent (which begin it)."""
    if not answer.startswith(sent):
        log.warning("a streamed answer's text differs from its sentences sent: %r, then %r", sent, answer)
        return ""
    return answer[len(sent) :]


def word_pieces(text: str) -> list[str]:
    """Split text into words, each keeping its trailing whitespace: "".join(pieces) == text."""
    return re.findall(r"\S+\s*|\s+", text)


def stream_completion(arriving: Iterator[str | Answer], completion_id: str, created: int) -> Iterator[bytes]:
    """OpenAI `chat.completion.chunk` events (framed by FastAPI's SSE encoder): role, content pieces (each sentence
    of a long answer as it holds, then the rest of the answer word by word), a final chunk with citations, [DONE]."""

    def chunk(delta: dict, finish_reason: str | None = None, **extra: Any) -> bytes:
        return event(
            {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
                **extra,
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    sent = ""
    for item in arriving:
        if isinstance(item, str):
            sent += item
            yield chunk({"content": item})
            continue
        for piece in word_pieces(rest_of(item.answer, sent)):
            yield chunk({"content": piece})
        yield chunk({}, "stop", citations=[c.model_dump() for c in item.citations])
    yield format_sse_event(data_str="[DONE]")


def event(payload: dict) -> bytes:
    return format_sse_event(data_str=json.dumps(payload, ensure_ascii=False))


@openai_router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    responses={
        200: {
            "description": "A `chat.completion`, or with `stream: true` server-sent "
            "`chat.completion.chunk` events ending `data: [DONE]`",
            "content": {"text/event-stream": {}},
        }
    },
)
def chat_completions(
    body: Annotated[ChatCompletionRequest, Body(openapi_examples=CHAT_EXAMPLES)],
    bot: Annotated[ServedBot, Depends(get_bot)],
) -> Any:
    """OpenAI-compatible chat: the last user message is the question, earlier messages are its history.

    Example with the official client:

        from openai import OpenAI
        client = OpenAI(base_url="http://127.0.0.1:7860/v1", api_key="unused-unless-EVENTBOT_API_KEY")
        reply = client.chat.completions.create(
            model="eventbot", messages=[{"role": "user", "content": "Who won the gold medal?"}])
        print(reply.choices[0].message.content, reply.model_extra["citations"])

    The answer carries `[n]` markers; the response adds a top-level `citations` list (in a streamed answer,
    on the last chunk). System messages are ignored: the bot answers only from its documents.
    """
    question = split_chat(body.messages, bot.settings)
    named = body.model not in (MODEL_ID, bot.collection) and body.model in bot.collection_names()
    bot = bot.for_collection(body.model if named else None)
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    if body.stream:
        arriving = bot.ask_streamed(question)
        first = next(arriving)  # an error comes before anything is sent: it stays 4xx JSON
        return EventSourceResponse(
            stream_completion(itertools.chain([first], arriving), completion_id, created),
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    answer = bot.ask(question)
    return ChatCompletion(
        id=completion_id,
        created=created,
        choices=[Choice(message=CompletionMessage(content=answer.answer))],
        citations=answer.citations,
    )


def model_ids(bot: ServedBot) -> list[str]:
    """`eventbot` (the server's collection) and each collection of the index: a chat's `model` may name one."""
    return list(dict.fromkeys([MODEL_ID, *bot.collection_names()]))


@openai_router.get("/models", response_model=ModelList)
def list_models(bot: Annotated[ServedBot, Depends(get_bot)]) -> ModelList:
    """The models this server answers with: `eventbot` (the server's collection) and each collection of the index."""
    return ModelList(data=[Model(id=name) for name in model_ids(bot)])


@openai_router.get("/models/{model_id}", response_model=Model, responses={404: {"description": "No such model"}})
def get_model(model_id: str, bot: Annotated[ServedBot, Depends(get_bot)]) -> Model:
    """Details of a model: `eventbot` or a collection of the index."""
    if model_id not in (names := model_ids(bot)):
        raise StarletteHTTPException(404, f"no model {model_id!r}; the models are {', '.join(names)}")
    return Model(id=model_id)
