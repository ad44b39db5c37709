"""``evaluate`` of a sentencepiece BPE model: its IDs counted on samples, the rows of its metrics.

A sentencepiece model has no merge list, so it is evaluated at its own size only (no
``sizes``, no ``checks``). Each text is encoded whole, as
``SentencePieceProcessor.encode`` encodes it (never cut into blocks: the dummy ``▁``
goes before each piece of text encoded). Its vocabulary, for the share used and the Rényi
efficiency, is every piece that encoding can produce: all but the control and unused
pieces (``<s>``, ``</s>``), as a byte-level model's is its bytes and learned tokens.
"""

from __future__ import annotations

from array import array

from bytepair._util.errors import ArgumentError
from bytepair.evaluation import metrics
from bytepair.model.spm_model import CONTROL, UNUSED, SentencePieceModel


def is_sentencepiece(model) -> bool:
    return isinstance(model, SentencePieceModel)


def check_plan(name: str, sizes, step, checks: bool) -> None:
    """Refuse what a model without a merge list cannot be evaluated at."""
    if sizes or step is not None:
        raise ArgumentError("sizes", f": {name!r} is a sentencepiece model, which has no merge "
                                     "list to cut to a smaller size")
    if checks:
        raise ArgumentError("checks", f": {name!r} is a sentencepiece model, which has no merge "
                                      "rules to check")


def model_entry(name: str, model: SentencePieceModel) -> dict:
    """The model's line of :attr:`Evaluation.models`."""
    return {"name": name, "kind": "sentencepiece", "vocab_size": len(model), "merges": None,
            "special_tokens": sum(1 for *_, kind in model.pieces if kind == CONTROL),
            "pattern": None, "sizes": [len(model)]}


def count_batch(model: SentencePieceModel, batch: list[str]) -> array:
    """How often each ID occurs in the encodings of the texts of ``batch``. O(n log n) in
    their length (the model's own encoder, in Python)."""
    counts = array("q", bytes(8 * len(model)))
    for text in batch:
        for token in model.encode(text):
            counts[token] += 1
    return counts


def producible(model: SentencePieceModel) -> list[int]:
    """The IDs that encoding text can produce: every piece but control and unused ones."""
    return [at for at, (*_, kind) in enumerate(model.pieces) if kind not in (CONTROL, UNUSED)]


def rows(name: str, model: SentencePieceModel, sample_list, counted, full_vocabulary: bool,
         power: float) -> tuple[list[dict], dict]:
    """The model's rows, one per sample, and its tokens per (size, sample name)."""
    vocab = producible(model)
    size = len(model)
    out, tokens_at = [], {}
    for sample, (totals, counts) in zip(sample_list, counted):
        hist = counts[name]
        tokens = sum(hist)
        unused = [token for token in vocab if not hist[token]]
        tokens_at[size, sample.name] = tokens
        out.append({
            "model": name, "vocab_size": size, "sample": sample.name, "tokens": tokens,
            "bytes_per_token": totals["bytes"] / tokens if tokens else None,
            "characters_per_token": totals["characters"] / tokens if tokens else None,
            "tokens_per_word": tokens / totals["words"] if totals["words"] else None,
            "utilization": (len(vocab) - len(unused)) / len(vocab),
            "renyi": metrics.renyi_efficiency([hist[token] for token in vocab], power,
                                              len(vocab) if full_vocabulary else None),
            "unused_count": len(unused), "unused": unused,
        })
    return out, tokens_at


def token_entry(model: SentencePieceModel, token: int) -> dict:
    """A piece as :func:`bytepair.evaluation.report` lists tokens: its ID and text."""
    piece = model.pieces[token][0]
    return {"id": token, "rank": None, "hex": piece.encode("utf-8").hex(), "text": piece}
