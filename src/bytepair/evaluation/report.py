"""``bytepair.evaluate``: how well models compress held-out samples, at one or many sizes.

One pass per sample: each batch of its texts is encoded once by each model
(the compiled encoder, on threads) and the IDs are counted. Every metric
then comes from those counts. A smaller vocabulary size of the same model
needs no second pass: its counts follow from the full model's by undoing
rules (:func:`bytepair.evaluation.metrics.shrink_counts`), exactly.
"""

from __future__ import annotations

import json
import os
from array import array
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from bytepair._util.errors import ArgumentError
from bytepair._util.validate import check_int
from bytepair.evaluation import checks as rule_checks
from bytepair.evaluation import metrics
from bytepair.evaluation import spm
from bytepair.evaluation.plot import plot_curves
from bytepair.evaluation.samples import Sample, batches, samples_of
from bytepair.formats.load import load
from bytepair.model import codec
from bytepair.model.models import BYTE_TOKENS, ByteModel
from bytepair.model.spm_model import NORMAL
from bytepair.model.tokenizer import Tokenizer
from bytepair.read.blocks import CUTTABLE
from bytepair.split.patterns import PATTERNS

#: Token IDs listed per row of the text rendering (the JSON lists all).
SHOWN = 8


@dataclass
class Evaluation:
    """The result of :func:`bytepair.evaluate`: tables as lists of dicts.

    * ``rows``: one per model, vocabulary size and sample: ``tokens``,
      ``bytes_per_token``, ``characters_per_token``, ``tokens_per_word``,
      ``utilization`` (share of the vocabulary's IDs used), ``renyi``
      (Rényi efficiency), ``unused_count`` and ``unused`` (IDs never produced);
    * ``samples``: each sample's ``bytes``, ``characters`` and ``words``;
    * ``parity``: per model and size, with two or more labelled samples:
      each label's tokens over the ``reference`` label's, the Gini
      coefficient of tokens per byte across labels (``gini``), and the Gini
      coefficient of tokens across labels (``gini_tokens``: on parallel
      samples, the same content in each language, the spread of its cost);
    * ``training``: per model and size, the tokens the rules save on the
      training text (from the rules alone) and, with ``checks``, the number of
      unreachable and intermediate-only tokens at that size;
    * ``checks``: per model, the unreachable and intermediate-only tokens with
      their ID, rank and bytes (``None`` when the rules carry no counts);
    * ``models``: each model's name, vocabulary size and merges; ``renyi``: the
      Rényi efficiency's settings (its power, and which vocabulary it divides
      by); ``tokenizers``: the tokenizers by model name, for showing token
      text (not part of the JSON).

    ``str()`` is a plain-text table; :meth:`to_json` is for machines.
    """

    models: list = field(default_factory=list)
    samples: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    parity: list = field(default_factory=list)
    training: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    renyi: dict = field(default_factory=dict)
    #: The tokenizers by model name, for showing token text (not part of the JSON).
    tokenizers: dict = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict:
        """All tables as one dict of JSON types."""
        return {"models": self.models, "samples": self.samples, "renyi": self.renyi,
                "rows": self.rows, "parity": self.parity, "training": self.training,
                "checks": self.checks}

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON text, indented by ``indent`` spaces (None: one line)."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def plot(self, path: str | os.PathLike) -> None:
        """Draw bytes per token against vocabulary size into ``path`` (needs matplotlib;
        see :func:`bytepair.evaluation.plot.plot_curves`)."""
        plot_curves(self, path)

    def __str__(self) -> str:
        return "\n".join(render(self))


def evaluate(models: Tokenizer | ByteModel | str | os.PathLike | Sequence | Mapping,
             samples: Mapping | Sequence = (), *, sizes: Sequence[int] | None = None, step: int | None = None,
             checks: bool = False, full_vocabulary: bool = False,
             power: float = metrics.RENYI_POWER, reference: str | None = None,
             per_line: bool = False, threads: int | None = None,
             trust_pattern: bool = False) -> Evaluation:
    """Evaluate tokenizers on held-out samples; returns an :class:`Evaluation`.

    Args:
        models: a :class:`Tokenizer`, :class:`ByteModel`, sentencepiece BPE model
            (:mod:`bytepair.evaluation.spm`: its own size only) or model file path, a
            list of them, or a mapping ``{name: model}``.
        samples: a mapping ``{label: source}`` (labelled samples, compared by
            parity and Gini) or a list of file paths (one sample each, named by
            the path); a source is a path (a glob, a directory, ``.gz``,
            JSON Lines, Parquet: as :class:`bytepair.Files` reads it), a
            :class:`bytepair.Files`, or a list of str texts. May be empty
            when only ``checks`` or the training curve are wanted.
        sizes: vocabulary sizes (special tokens included, as
            :meth:`Tokenizer.truncate` takes them) to evaluate each model's
            truncation at, besides its full size. Each size is measured as
            ``truncate(size)`` encodes: a SuperBPE model at its transition or
            below as its stage-1 tokenizer, with the stage-1 pattern.
        step: also evaluate every multiple of ``step`` below the full size.
        checks: list unreachable and intermediate-only tokens.
        full_vocabulary: divide the Rényi entropy by the log of the
            vocabulary's size instead of the number of token types observed.
        power: the order of the Rényi entropy (2.5, as Zouhar et al. advise).
        reference: the label parity is relative to (default: the first).
        per_line: read plain text files as one document per line.
        threads: encoder threads (default: one per core).
        trust_pattern: accept a custom regex in a model file (see :func:`bytepair.load`).

    Sample text is encoded as ordinary text (special-token text is not
    special), so the vocabulary the metrics count is the 256 bytes and the
    learned tokens; special tokens are left out. A tokenizer imported with its
    source's IDs (``Tokenizer.ids``, e.g. from a ``tokenizer.json``) is
    evaluated in bytepair's numbering: the metrics are the same, and token
    lists give bytepair's IDs (with each token's rank and bytes). Cost: one encoding of each
    sample per model, plus O(vocabulary) per size.

    >>> import bytepair
    >>> tok = bytepair.train(["low lower lowest"] * 3, merges=4, pretokenize="gpt2", progress=False)
    >>> table = bytepair.evaluate(tok, {"en": ["lowest low"]})
    >>> row = table.rows[0]
    >>> row["tokens"], row["bytes_per_token"], row["tokens_per_word"]
    (5, 2.0, 2.5)
    """
    named = _models_of(models, trust_pattern)
    sample_list = samples_of(samples, per_line) if _given(samples) else []
    if isinstance(power, bool) or not isinstance(power, (int, float)):
        raise TypeError(f"power must be a number, got {type(power).__name__}")
    power = float(power)
    if power == 1.0 or not power > 0 or power == float("inf"):
        raise ValueError(f"power must be positive and not 1, got {power}")
    if step is not None:
        step = check_int(step, "step", minimum=1)
    threads = check_int(threads, "threads", minimum=1) if threads is not None else None
    plans = {name: _sizes(tok, name, sizes, step, checks) for name, tok in named.items()}
    labels = [s.name for s in sample_list if s.labelled]
    if reference is not None and reference not in labels:
        raise ArgumentError("reference", f": {reference!r} is not the label of a sample "
                                         f"(labels: {', '.join(labels) or 'none'})")
    names = [s.name for s in sample_list]
    for name in set(names):
        if names.count(name) > 1:
            raise ArgumentError("samples", f": {name!r} is given twice")

    table = Evaluation(tokenizers=named)
    table.renyi = {"power": power, "vocabulary": "full" if full_vocabulary else "observed"}
    table.models = [spm.model_entry(name, tok) if spm.is_sentencepiece(tok) else
                    {"name": name, "vocab_size": tok.vocab_size, "merges": len(tok.merges),
                     "special_tokens": len(tok.special_tokens), "pattern": tok.pattern,
                     "sizes": plans[name]} for name, tok in named.items()]
    # A SuperBPE model at its transition or below is its stage-1 tokenizer, which splits with
    # another pattern: those sizes are counted from an encoding by that tokenizer.
    stage_one = {name: _stage_one(tok, plans[name]) for name, tok in named.items()}
    encoders = dict(named)
    encoders.update({(name, 1): tok for name, tok in stage_one.items() if tok is not None})
    counted = _count_samples(encoders, sample_list, threads)
    for sample, (totals, _) in zip(sample_list, counted):
        table.samples.append({"name": sample.name, "labelled": sample.labelled, **totals})
    for name, tok in named.items():
        if spm.is_sentencepiece(tok):
            rows, tokens_at = spm.rows(name, tok, sample_list, counted, full_vocabulary, power)
            table.rows.extend(rows)
            _parity(table, name, plans[name], sample_list, counted, tokens_at, reference)
            continue
        tokens_at = _rows(table, name, tok, plans[name], sample_list, counted, full_vocabulary, power)
        _parity(table, name, plans[name], sample_list, counted, tokens_at, reference)
        _training(table, name, tok, plans[name], checks)
    return table


def _given(samples) -> bool:
    if isinstance(samples, (str, os.PathLike)):
        return True
    try:
        return len(samples) > 0
    except TypeError:
        return True  # an iterable: samples_of reads it


def _models_of(models, trust_pattern: bool) -> dict[str, Tokenizer]:
    if isinstance(models, dict):
        items = list(models.items())
    else:
        items = list(models) if isinstance(models, (list, tuple)) else [models]
        items = [(_name_of(m, i, len(items)), m) for i, m in enumerate(items)]
    if not items:
        raise ValueError("models: no models given")
    out: dict[str, Tokenizer] = {}
    for name, model in items:
        if name in out:
            raise ValueError(f"models: {name!r} is given twice")
        out[name] = _tokenizer_of(model, name, trust_pattern)
    return out


def _name_of(model, index: int, count: int) -> str:
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    return "model" if count == 1 else f"model {index + 1}"


def _tokenizer_of(model, name: str, trust_pattern: bool) -> Tokenizer:
    if isinstance(model, (str, os.PathLike)):
        model = load(model, trust_pattern=trust_pattern)
    if spm.is_sentencepiece(model):
        return model
    if isinstance(model, ByteModel):
        return Tokenizer(model)
    if isinstance(model, Tokenizer):
        if model.ids is not None:
            # An import that keeps its source's IDs: the counts below are indexed by
            # bytepair's numbering (the rules undo by rank), which no metric depends on.
            return Tokenizer(model.model, list(model.special_tokens))
        return model
    raise TypeError(f"models: {name!r} must be a Tokenizer, a ByteModel, a sentencepiece model "
                    f"or a model file of one, got {type(model).__name__}")


def _sizes(tok: Tokenizer, name: str, sizes, step, checks: bool) -> list[int]:
    """The vocabulary sizes to evaluate ``tok`` at, ascending, its full size last."""
    if spm.is_sentencepiece(tok):
        spm.check_plan(name, sizes, step, checks)
        return [len(tok)]
    least = BYTE_TOKENS + len(tok.special_tokens)
    chosen = {tok.vocab_size}
    for size in sizes or ():
        size = check_int(size, "sizes", minimum=-2**63)
        if not least <= size <= tok.vocab_size:
            raise ArgumentError("sizes", f": {size} is not a vocabulary size of {name!r} "
                                         f"({least}..{tok.vocab_size})")
        chosen.add(size)
    if step is not None:
        chosen.update(range(max(step, -(-least // step) * step), tok.vocab_size, step))
    return sorted(chosen)


def _stage_one(tok: Tokenizer, plan: list[int]) -> Tokenizer | None:
    """A SuperBPE tokenizer's stage-1 tokenizer (its truncation to the transition), when
    ``plan`` holds a size at the transition or below; else None."""
    stages = None if spm.is_sentencepiece(tok) else tok.model.stages
    if stages is None:
        return None
    top = stages.transition + len(tok.special_tokens)
    return tok.truncate(top) if plan[0] <= top and plan[0] < tok.vocab_size else None


def _count_samples(named: dict, sample_list: list[Sample], threads):
    """Per sample: its totals, and per tokenizer the counts of each ID its encoding holds."""
    cut_patterns = {PATTERNS[name] for name in CUTTABLE if name in PATTERNS}
    cuttable = all(not spm.is_sentencepiece(tok) and tok.pattern in cut_patterns
                   for tok in named.values())
    out = []
    for sample in sample_list:
        totals = {"documents": 0, "bytes": 0, "characters": 0, "words": 0}
        counts = {name: None for name in named}
        for batch, documents in batches(sample, cuttable):
            totals["documents"] += documents
            for text in batch:
                try:
                    totals["bytes"] += len(text) if text.isascii() else len(text.encode("utf-8"))
                except UnicodeEncodeError as exc:  # a lone surrogate, before any model runs
                    raise ValueError(f"samples[{sample.name!r}]: a text is not encodable as "
                                     f"UTF-8: {exc.reason} at index {exc.start}") from None
                totals["characters"] += len(text)
                totals["words"] += codec.words_in_text(text)
            for name, tok in named.items():
                if spm.is_sentencepiece(tok):
                    batch_counts = spm.count_batch(tok, batch)
                else:
                    ids = tok.encode_to_array(batch, threads=threads, disallowed_special=())
                    batch_counts = codec.count_ids(ids, tok.model.vocab_size)
                if counts[name] is None:
                    counts[name] = batch_counts
                else:
                    total = counts[name]
                    for token, n in enumerate(batch_counts):
                        if n:
                            total[token] += n
        for name, tok in named.items():
            if counts[name] is None:  # a sample without texts
                size = len(tok) if spm.is_sentencepiece(tok) else tok.model.vocab_size
                counts[name] = array("q", bytes(8 * size))
        out.append((totals, counts))
    return out


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _rows(table, name, tok, plan, sample_list, counted, full_vocabulary, power) -> dict:
    """Append the rows of one model; returns its tokens per (size, sample name)."""
    lefts = [m.left for m in tok.merges]
    rights = [m.right for m in tok.merges]
    specials = len(tok.special_tokens)
    tokens_at: dict = {}
    mine: list[dict] = []
    stages = tok.model.stages
    for sample, (totals, counts) in zip(sample_list, counted):
        hist = counts[name][:]  # shrunk in place, size by size
        tokens = sum(hist)
        top = tok.model.vocab_size
        stage_two = stages is not None
        for size in reversed(plan):
            vocab = size - specials  # bytes and learned tokens
            if stage_two and vocab <= stages.transition and vocab < tok.model.vocab_size:
                stage_two = False
                # Below the transition the stage-1 tokenizer encodes: start again from its counts.
                hist = counts[name, 1][:]
                tokens = sum(hist)
                top = stages.transition
            tokens += metrics.shrink_counts(hist, lefts, rights, BYTE_TOKENS, top, vocab)
            top = vocab
            unused = [token for token in range(vocab) if not hist[token]]
            tokens_at[size, sample.name] = tokens
            mine.append({
                "model": name, "vocab_size": size, "sample": sample.name, "tokens": tokens,
                "bytes_per_token": _ratio(totals["bytes"], tokens),
                "characters_per_token": _ratio(totals["characters"], tokens),
                "tokens_per_word": _ratio(tokens, totals["words"]),
                "utilization": (vocab - len(unused)) / vocab,
                "renyi": metrics.renyi_efficiency(
                    hist[:vocab], power, vocab if full_vocabulary else None),
                "unused_count": len(unused), "unused": unused,
            })
    # Rows in ascending size, samples in the order given (the sort is stable).
    table.rows.extend(sorted(mine, key=lambda row: row["vocab_size"]))
    return tokens_at


def _parity(table, name, plan, sample_list, counted, tokens_at, reference) -> None:
    labelled = [(s, totals) for s, (totals, _) in zip(sample_list, counted) if s.labelled]
    if len(labelled) < 2:
        return
    ref = reference if reference is not None else labelled[0][0].name
    for size in plan:
        base = tokens_at[size, ref]
        per_byte = {s.name: _ratio(tokens_at[size, s.name], totals["bytes"]) for s, totals in labelled}
        table.parity.append({
            "model": name, "vocab_size": size, "reference": ref,
            "parity": {s.name: _ratio(tokens_at[size, s.name], base) for s, _ in labelled},
            "tokens_per_byte": per_byte,
            "gini": (metrics.gini(list(per_byte.values()))
                     if None not in per_byte.values() else None),
            "gini_tokens": metrics.gini([tokens_at[size, s.name] for s, _ in labelled]),
        })


def _token_entry(tok: Tokenizer, token: int) -> dict:
    data = tok.token_bytes(token)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {"id": token, "rank": token - BYTE_TOKENS, "hex": data.hex(), "text": text}


def _training(table, name, tok, plan, with_checks: bool) -> None:
    merges = tok.merges
    specials = len(tok.special_tokens)
    saved = rule_checks.tokens_saved(merges)
    counts = [size - specials - BYTE_TOKENS for size in plan]
    unreachable = rule_checks.unreachable_tokens(tok.model) if with_checks else None
    middle = rule_checks.intermediate_counts(merges, counts) if with_checks else None
    for size, k in zip(plan, counts):
        row = {"model": name, "vocab_size": size,
               "tokens_saved": saved[k] if saved is not None else None,
               "share_of_savings": (_ratio(saved[k], saved[-1]) if saved is not None else None)}
        if with_checks:
            row["unreachable_count"] = sum(1 for t in unreachable if t < BYTE_TOKENS + k)
            row["intermediate_count"] = middle[k] if middle is not None else None
        table.training.append(row)
    if with_checks:
        middle_ids = rule_checks.intermediate_tokens(merges)
        table.checks.append({
            "model": name, "vocab_size": tok.vocab_size,
            "unreachable_count": len(unreachable),
            "unreachable": [_token_entry(tok, t) for t in unreachable],
            "intermediate_count": None if middle_ids is None else len(middle_ids),
            "intermediate": None if middle_ids is None else [_token_entry(tok, t) for t in middle_ids],
        })


# -- the text rendering ---------------------------------------------------------

def _number(value, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(header)]
    line = lambda cells: "  ".join(  # noqa: E731 - first column left, numbers right
        c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return [line(header)] + [line(r) for r in rows]


def _shown(entries: list[dict], total: int | None = None) -> str:
    """The first :data:`SHOWN` tokens as ``id='text'`` (``id=0x..`` when not UTF-8)."""
    items = [f"{e['id']}={e['text']!r}" if e["text"] is not None else f"{e['id']}=0x{e['hex']}"
             for e in entries[:SHOWN]]
    total = len(entries) if total is None else total
    return ", ".join(items) + (", ..." if total > SHOWN else "")


def render(table: Evaluation) -> Iterable[str]:
    """The lines of the plain-text rendering of ``table``."""
    renyi = f"renyi{table.renyi.get('power', metrics.RENYI_POWER):g}"
    for model in table.models:
        name = model["name"]
        if model.get("kind") == "sentencepiece":
            yield (f"model {name}: vocabulary {model['vocab_size']} (sentencepiece BPE pieces, "
                   f"{model['special_tokens']} of them control pieces)")
        else:
            yield (f"model {name}: vocabulary {model['vocab_size']} (256 bytes + "
                   f"{model['merges']} merges + {model['special_tokens']} special)")
        rows = [r for r in table.rows if r["model"] == name]
        if rows:
            yield from _table(
                ["sample", "size", "tokens", "bytes/tok", "chars/tok", "tok/word", "used",
                 renyi, "unused"],
                [[r["sample"], str(r["vocab_size"]), str(r["tokens"]),
                  _number(r["bytes_per_token"]), _number(r["characters_per_token"]),
                  _number(r["tokens_per_word"]), _number(r["utilization"]),
                  _number(r["renyi"]), str(r["unused_count"])] for r in rows])
            tok = table.tokenizers.get(name)
            for r in rows:
                if spm.is_sentencepiece(tok):
                    learned = [t for t in r["unused"] if tok.pieces[t][2] == NORMAL]
                    entry, what = spm.token_entry, "pieces"
                else:
                    learned = [t for t in r["unused"] if t >= BYTE_TOKENS]
                    entry, what = _token_entry, "learned tokens"
                if r["vocab_size"] == model["vocab_size"] and learned and tok is not None:
                    yield (f"{what} never produced on {r['sample']}: {len(learned)}: "
                           + _shown([entry(tok, t) for t in learned[:SHOWN]], len(learned)))
        parity = [p for p in table.parity if p["model"] == name]
        if parity:
            labels = list(parity[0]["parity"])
            yield (f"parity (tokens relative to {parity[0]['reference']!r}), Gini of tokens per byte"
                   " and Gini of tokens:")
            yield from _table(["size", *labels, "gini", "gini tokens"],
                              [[str(p["vocab_size"]), *(_number(p["parity"][lab]) for lab in labels),
                                _number(p["gini"]), _number(p["gini_tokens"])] for p in parity])
        training = [t for t in table.training if t["model"] == name]
        if len(training) > 1 or (training and "unreachable_count" in training[0]):
            extra = "unreachable_count" in training[0]
            yield "training text (from the rules' replacement counts):"
            yield from _table(
                ["size", "tokens saved", "share"] + (["unreachable", "intermediate"] if extra else []),
                [[str(t["vocab_size"]), _number(t["tokens_saved"]), _number(t["share_of_savings"])]
                 + ([str(t["unreachable_count"]), _number(t["intermediate_count"])] if extra else [])
                 for t in training])
        for check in (c for c in table.checks if c["model"] == name):
            yield f"unreachable tokens: {check['unreachable_count']}" + (
                f": {_shown(check['unreachable'])}" if check["unreachable"] else "")
            if check["intermediate"] is None:
                yield "intermediate-only tokens: unknown (the rules carry no replacement counts)"
            else:
                yield f"intermediate-only tokens: {check['intermediate_count']}" + (
                    f": {_shown(check['intermediate'])}" if check["intermediate"] else "")
        yield ""
