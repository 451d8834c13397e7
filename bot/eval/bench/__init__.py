"""Performance benchmark (`eventbot bench`): where the time goes on this machine, measured end to end on the
real model, a real embedded Chroma and real `eventbot` processes, in a temporary folder (the user's index is
never touched).

Every figure comes with its floor measured in the same run, and the ratio between them, because absolute
times on a shared CPU vary from run to run while ratios hold:

- floor: the same MiniLM model embedding one question, warm (`embed_question_ms`), and its embed-only rate on
  both cores (`embed_only_rps`); for start-up, a process that imports the model, loads it and embeds one
  question (`floor_start_s`);
- answer latency, warm, over the article's own questions (data/eval/event_qa.jsonl), at 1 article and at a
  generated distractor corpus with the article inside (`bot.eval.distractors`; ≥ 20,000 chunks in full mode),
  with hit@k and accuracy of the article's questions scored as `eventbot eval` scores them;
- requests/s and errors at concurrency 1, 4 and 12 against a live `eventbot serve` (real HTTP), with 1 and 2
  workers; server peak RSS at 1 article and at the large corpus; `/healthz` latency at the large corpus;
- cold start: `eventbot ask` to its first answer and `eventbot serve` to its first 200 on /healthz;
- ingest: seconds to index the generated corpus against raw `encode(batch_size=64)` of the same chunks plus
  the spaCy parse of the same documents;
- one large generated document (≥ 300 KB) indexed with the article: the article's questions and questions
  that need reading the whole document, relative to the warm p50 on the article alone;
- a new user's 20-page PDF report (generated: `bot.eval.pdfs`, fpdf2, a dev dependency; skipped without it) sent to
  a live server's `POST /api/documents` and asked about: seconds to the first cited answer (its page checked)
  against `eventbot index` of the same file as a whole process (issue 23: goal ≤ 1.2), in quick mode too.

`quick` keeps every figure's key but measures on a small corpus with fewer requests (a minute or so); figures
that only a full run measures are None then.

Killed from outside (SIGTERM from a timeout, Ctrl-C, SIGHUP), the run stops the servers it started: each `eventbot
serve` runs in a process group of its own (its workers with it), which is stopped from a `finally` block, since
SIGTERM and SIGHUP raise SystemExit here as Ctrl-C raises KeyboardInterrupt; an `atexit` hook stops any group left,
and on Linux a server also gets SIGTERM when the process that started it dies without cleaning up (SIGKILL).

The modules: `harness` (the run, part by part), `figures` (the result, sizes, rounding), `questions`, `answers` (floors
and warm answers), `corpora` (large corpus, corpus sizes, one large document), `processes` (starting and stopping
`eventbot` and `chroma run` processes), `load` (the load generator), `serving` (cold start, live servers under load),
`upload` (the PDF upload) and `labels` (what each figure means).
"""

from bot.eval.bench.figures import BenchResult, SectionSkipped, Sizes
from bot.eval.bench.harness import run_bench
from bot.eval.bench.labels import ALL_LABELS, EXTRA_LABELS, LABELS
from bot.eval.bench.processes import LiveServer, chroma_server, live_server, stop_on_termination
from bot.eval.bench.questions import article_items, new_questions, warm_up_questions
from bot.eval.bench.upload import upload_pdf

__all__ = [
    "ALL_LABELS",
    "EXTRA_LABELS",
    "LABELS",
    "BenchResult",
    "LiveServer",
    "SectionSkipped",
    "Sizes",
    "article_items",
    "chroma_server",
    "live_server",
    "new_questions",
    "run_bench",
    "stop_on_termination",
    "upload_pdf",
    "warm_up_questions",
]
