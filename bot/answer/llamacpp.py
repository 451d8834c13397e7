"""llama.cpp in this process: the GGUF model loaded once, a LangChain chat model over it (one generation at a time, a
bounded queue, a time limit, decoding held to an answer's shape, the log-probabilities of what it wrote), and what it
read of documents saved and loaded again (bot.answer.prompt_states). bot.answer.generative builds it for
`EVENTBOT_LLM=llamacpp`.
"""

import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from bot.answer.prompt_states import PromptStates
from bot.errors import LLMBusyError, LLMSetupError

log = logging.getLogger(__name__)

N_CTX = 4096  # tokens of context for a local GGUF: six 400-character passages, the rules and the answer fit


@cache
def load_llama(path: str) -> Any:
    """A GGUF model loaded by llama-cpp-python, once per process and path."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise LLMSetupError(
            "EVENTBOT_LLM=llamacpp needs llama-cpp-python: run `make run` (or pip install -e .)"
        ) from exc
    if not Path(path).is_file():
        raise LLMSetupError(f"EVENTBOT_LLM_MODEL: no GGUF file at {path}")
    started = time.perf_counter()
    try:
        with without_extra_buffer_types():
            # every core this process may use, for decoding too (llama-cpp-python's default is half of them:
            # Qwen2.5-Coder-1.5B on 2 cores decoded 12.2 tokens/s on one thread, 20.5 on two; `eventbot bench`)
            cores = len(os.sched_getaffinity(0))
            llama = llama_cpp.Llama(model_path=path, n_ctx=N_CTX, n_threads=cores, n_threads_batch=cores, verbose=False)
    except Exception as exc:
        raise LLMSetupError(f"EVENTBOT_LLM_MODEL: cannot load {path} as a GGUF model ({exc})") from exc
    log.info("loaded %s in %.1fs", path, time.perf_counter() - started)
    return llama


@cache
def prompt_states(path: str, folder: Path, megabytes: int) -> PromptStates:
    """The saved readings of the model at `path` (one per process, as the model is)."""
    return PromptStates(load_llama(path), path, folder.expanduser(), megabytes * 2**20)


_params_lock = threading.Lock()


@contextmanager
def without_extra_buffer_types() -> Iterator[None]:
    """Load with `use_extra_bufts = False`. llama.cpp built natively on a CPU that reports AMX repacks Q4/Q8
    weights for AMX kernels, and on these virtual machines the AMX instructions trap (SIGILL) although the CPU
    flags them. The plain CPU kernels are used instead. `Llama` has no argument for it, so its default model
    parameters are wrapped while it loads."""
    import llama_cpp.llama as llama_module

    with _params_lock:
        original = llama_module.llama_cpp.llama_model_default_params

        def params():
            p = original()
            p.use_extra_bufts = False
            return p

        llama_module.llama_cpp.llama_model_default_params = params
        try:
            yield
        finally:
            llama_module.llama_cpp.llama_model_default_params = original


class ModelTurns:
    """Whose turn it is at one `llama_cpp.Llama`: a context is not thread-safe, and two users of it at once (a question
    and a reading ahead, say) crash the process inside llama.cpp (a GGML_ASSERT or a segfault). Every chat model over
    the same `Llama` shares its one `ModelTurns` (`turns_of`), however many bots a served process holds: the bot
    swapped out when the index changes may still be reading ahead while the fresh one answers. `lock` is held for all
    of one use (loading a saved reading, generating, saving it); `waiting` counts those generating or waiting to;
    `recent_s` is a moving average of an answer's seconds, for a refusal's Retry-After."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count_lock = threading.Lock()
        self.waiting = 0
        self.recent_s = 2.0


_turns: "weakref.WeakKeyDictionary[Any, ModelTurns]" = weakref.WeakKeyDictionary()
_turns_lock = threading.Lock()


def turns_of(llama: Any) -> ModelTurns:
    """The one `ModelTurns` of this `Llama` in this process."""
    with _turns_lock:
        turns = _turns.get(llama)
        if turns is None:
            turns = _turns[llama] = ModelTurns()
        return turns


ROLES = {"system": "system", "human": "user", "ai": "assistant"}


class LlamaCppChat(BaseChatModel):
    """A thin LangChain chat model over an in-process `llama_cpp.Llama`: greedy decoding, at most `max_tokens`
    tokens, stopped after `timeout_s` seconds, optionally held to the regular language `shape` (ShapedGreedy). One
    use of the `Llama` at a time, shared with every other chat model over it (ModelTurns); at most `queue` more wait
    for their turn, and a request beyond them is refused at once (LLMBusyError, with how long a generation has lately
    taken times the queue ahead). With
    `states`, what it read of the documents (the system message) is saved once and loaded when they come again."""

    llama: Any = Field(exclude=True)
    model_path: str
    max_tokens: int = 256
    temperature: float = 0.0
    timeout_s: float = 60.0
    shape: str | None = None  # a regular expression every reply must match whole
    abstention: str | None = None  # the reply that declines: the probability of opening with it is recorded
    queue: int = 8
    states: PromptStates | None = Field(default=None, exclude=True)

    @property
    def turns(self) -> ModelTurns:
        return turns_of(self.llama)

    @property
    def _llm_type(self) -> str:
        return "llamacpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "max_tokens": self.max_tokens, "temperature": self.temperature}

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = list(self._stream(messages, stop, run_manager, **kwargs))
        signals = chunks[-1].message.response_metadata
        text = "".join(chunk.text for chunk in chunks)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, response_metadata=signals))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        request = [{"role": ROLES.get(m.type, "user"), "content": str(m.text)} for m in messages]
        turns = self.turns
        with turns.count_lock:
            if turns.waiting > self.queue:
                ahead = turns.waiting
                raise LLMBusyError(
                    f"{ahead} questions are waiting for the LLM (EVENTBOT_LLM_QUEUE={self.queue}): try again shortly",
                    retry_after_s=max(1, math.ceil(turns.recent_s * ahead)),
                )
            turns.waiting += 1
        try:  # the time limit counts from now: waiting for the turn is part of it
            deadline = time.monotonic() + self.timeout_s
            yield from self._generate_in_turn(
                request, stop, run_manager, deadline, kwargs.get("max_tokens"), kwargs.get("shape", self.shape)
            )
        finally:
            with turns.count_lock:
                turns.waiting -= 1

    def _generate_in_turn(
        self,
        request: list[dict],
        stop: list[str] | None,
        run_manager: CallbackManagerForLLMRun | None,
        deadline: float,
        max_tokens: int | None = None,
        shape: str | None = None,
    ) -> Iterator[ChatGenerationChunk]:
        turns = self.turns
        if not turns.lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise TimeoutError(f"no turn at the LLM within {self.timeout_s:g}s")
        try:
            started = time.monotonic()
            documents = request[0]["content"] if request and request[0]["role"] == "system" else None
            if self.states and documents is not None:
                self.states.before(documents)
            recorder = TokenLogprobs(self.llama, self.abstention)  # first: it records the model's own distribution
            processors = [recorder, ShapedGreedy(self.llama, shape)] if shape else [recorder]
            stream = self.llama.create_chat_completion(
                messages=request,
                temperature=self.temperature,
                max_tokens=max_tokens or self.max_tokens,
                stop=stop or [],
                logits_processor=processors,
                stream=True,
            )
            try:
                for part in stream:
                    delta = part["choices"][0]["delta"].get("content") or ""
                    if delta:
                        chunk = ChatGenerationChunk(message=AIMessageChunk(content=delta))
                        if run_manager:
                            run_manager.on_llm_new_token(delta, chunk=chunk)
                        yield chunk
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"no complete answer within {self.timeout_s:g}s")
                if self.states and documents is not None:
                    self.states.after()
            finally:
                stream.close()
                if max_tokens != 1:  # an answer (a reading ahead takes far longer and says nothing of answers)
                    turns.recent_s = 0.7 * turns.recent_s + 0.3 * (time.monotonic() - started)
            yield ChatGenerationChunk(message=AIMessageChunk(content="", response_metadata=recorder.signals()))
        finally:
            turns.lock.release()

    def read_ahead(self, messages: list[BaseMessage], stop: threading.Event | None = None) -> bool:
        """Read the documents of `messages` (their system message) and save what was read, unless saved already,
        being read by another process, or nothing is saved; it starts only while no question waits for the model (a
        question that comes meanwhile waits for this one reading). True when it read them."""
        if self.states is None:
            return False
        with self.states.reading(str(messages[0].text)) as ours:  # not saved, nor read by another worker now
            if not ours:
                return False
            while self.turns.waiting:
                if stop is not None and stop.wait(0.2):
                    return False
                time.sleep(0.05)
            try:
                for _ in self._stream(messages, max_tokens=1):
                    pass
            except TimeoutError:  # read, but not within the time limit: the next question on them saves it
                return False
            return True


YES, NO = ("Yes", " Yes", "yes"), ("No", " No", "no")  # the first tokens of a reply opening with either


class TokenLogprobs:
    """A llama.cpp logits processor that changes nothing and records, at each step, the log-probability the model
    gave the token it then wrote (the raw distribution, before ShapedGreedy), and at the first step the probability
    of opening with the abstention's first token (when there is one) and P(Yes) / (P(Yes) + P(No)): left to itself
    the model opens most replies to a yes/no question with "Yes", right or not, and how sure it was of that tells
    them apart better than the word does (docs/llm-model.md)."""

    def __init__(self, llama: Any, abstention: str | None = None):
        self.llama = llama
        self.logprobs: list[float] = []
        self.p_not_in_documents: float | None = None
        self.yes_share: float | None = None
        self._last: np.ndarray | None = None
        self._prompt_tokens: int | None = None
        self._abstain_token = first_token(llama, abstention) if abstention else None
        self._yes = sorted({first_token(llama, word) for word in YES})
        self._no = sorted({first_token(llama, word) for word in NO})

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self._prompt_tokens is None:
            self._prompt_tokens = len(input_ids)
        elif self._last is not None:  # the token written after the last call is the newest input
            self.logprobs.append(float(self._last[int(input_ids[-1])]))
        shifted = scores - scores.max()
        self._last = shifted - np.log(np.exp(shifted).sum())
        if self.yes_share is None:  # the first step
            probabilities = np.exp(self._last)
            if self._abstain_token is not None:
                self.p_not_in_documents = float(probabilities[self._abstain_token])
            p_yes, p_no = float(probabilities[self._yes].sum()), float(probabilities[self._no].sum())
            self.yes_share = p_yes / (p_yes + p_no) if p_yes + p_no > 0 else 0.5
        return scores

    def signals(self) -> dict:
        return {
            "token_logprobs": self.logprobs,
            "p_not_in_documents": self.p_not_in_documents,
            "yes_share": self.yes_share,
        }


class ShapedGreedy:
    """A llama.cpp logits processor for greedy decoding held to a regular language (`shape`, a `regex` pattern): it
    leaves only the likeliest token whose text keeps the reply a prefix of some string of the language (`regex`'s
    partial match), and an end-of-generation token only where the reply is whole. That is the token llama.cpp's
    grammar sampler picks greedily for the same language, but the grammar sampler tests all 151,936 tokens at every
    step (on a 2-core AVX2 CPU about as long as the step itself), and this tests the few likeliest
    (docs/llm-model.md)."""

    def __init__(self, llama: Any, shape: str):
        import llama_cpp

        self.shape = _compiled_shape(shape)
        self.vocab = llama._model
        self.is_end = lambda token: bool(llama_cpp.llama_vocab_is_eog(llama._model.vocab, token))
        self._prompt_tokens: int | None = None

    def allows(self, written: bytes, token: int) -> bool:
        """Whether `token` may follow the reply so far (`written`)."""
        if self.is_end(token):
            return self.shape.fullmatch(written.decode("utf-8", "replace")) is not None
        piece = self.vocab.detokenize([token], special=True)
        if not piece:
            return False
        text = (written + piece).decode("utf-8", "replace")  # an unfinished character reads as one (U+FFFD)
        return self.shape.fullmatch(text, partial=True) is not None

    def __call__(self, input_ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
        if self._prompt_tokens is None:
            self._prompt_tokens = len(input_ids)
        written = self.vocab.detokenize([int(t) for t in input_ids[self._prompt_tokens :]], special=True)
        best = np.argpartition(-scores, 32)[:32]
        for candidates in (best[np.argsort(-scores[best])], np.argsort(-scores)):
            for token in candidates:
                if self.allows(written, int(token)):
                    held = np.full_like(scores, -np.inf)
                    held[token] = scores[token]
                    return held
        return scores


@cache
def _compiled_shape(shape: str) -> Any:
    import regex

    return regex.compile(shape)


def first_token(llama: Any, text: str) -> int:
    return llama.tokenize(text.encode(), add_bos=False, special=False)[0]
