"""The local LLM's own speed, the floor any answer the LLM reads is measured against: llama-cpp-python alone, the
file and threads the bot loads (`bot.answer.generative.load_llama`), the article first in the system message and the
question last, so that after the first question llama.cpp reuses the article's cached prefix and a new question
costs only its own tokens and the answer's."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from bot.eval.bench.corpora import ARTICLE
from bot.eval.bench.figures import BenchResult, SectionSkipped, Sizes, ms, pct
from bot.eval.bench.questions import article_items

SECTION = "the local LLM alone: prefill, decode, a question over the cached article"
ANSWER_TOKENS = 24  # about a short answer with its citation
SYSTEM = "Answer the question from the article in one short sentence. If the article does not say, reply: I don't know."


def cpu_flags() -> str:
    """The CPU's vector and matrix flags that llama.cpp's kernels use."""
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16", "avx_vnni")
    try:
        line = next(x for x in Path("/proc/cpuinfo").read_text().splitlines() if x.startswith("flags"))
    except (OSError, StopIteration):
        return "unknown"
    return " ".join(flag for flag in wanted if flag in line.split()) or "none of AVX2/AVX-512/AMX"


def measure_llm_floor(result: BenchResult, sizes: Sizes, model: Path | None = None) -> None:
    """Prefill and decode tokens/s, and a new question's latency over the cached article (`model`: the installed
    LLM by default; skipped when it is not installed), with the CPU's flags in the notes."""
    from bot.answer.generative import load_llama
    from bot.errors import LLMSetupError
    from bot.llm_file import installed

    try:
        path = model or installed()
        llama = load_llama(str(path))
    except LLMSetupError as exc:
        raise SectionSkipped(str(exc)) from exc
    f = result.figures
    article = ARTICLE.read_text(encoding="utf-8")
    system = {"role": "system", "content": f"{SYSTEM}\n\n<article>\n{article}\n</article>"}

    def ask(question: str, max_tokens: int) -> tuple[float, dict]:
        started = time.perf_counter()
        reply = llama.create_chat_completion(
            messages=[system, {"role": "user", "content": question}], temperature=0.0, max_tokens=max_tokens
        )
        return time.perf_counter() - started, reply["usage"]

    llama.reset()  # nothing cached: the first call reads the whole article
    seconds, usage = ask("Who won?", 1)
    f["llm_prompt_tokens"] = usage["prompt_tokens"]
    f["llm_prefill_tokens_per_s"] = round(usage["prompt_tokens"] / seconds, 1)
    f["llm_prefill_article_s"] = round(seconds, 2)
    # The same prompt again: its prefix is cached, so the time is the answer's tokens (decode)
    seconds, usage = ask("Who won?", ANSWER_TOKENS)
    f["llm_decode_tokens_per_s"] = round(usage["completion_tokens"] / seconds, 1)
    questions = [item.question for item in article_items()][: 4 if sizes.quick else 16]
    times = [ask(question, ANSWER_TOKENS)[0] for question in questions]
    f["llm_questions"] = len(times)
    f["llm_floor_question_p50_ms"] = ms(statistics.median(times))
    f["llm_floor_question_p95_ms"] = pct([t * 1000 for t in times], 95)
    f["llm_threads"] = llama.n_threads
    f["llm_model_mb"] = round(path.stat().st_size / 1e6)
    result.notes["llm_cpu_flags"] = cpu_flags()
