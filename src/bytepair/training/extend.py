"""Extending an existing tokenizer, keeping every ID: :func:`extend`.

It reads like training: read the corpus, cut it into pieces with the *base's* pipeline (its
added tokens split out, its normalizer, its pre-tokenizer) and count them, start every piece
as the base's own encoding, then run the pair engine (:mod:`bytepair.learn.extend`), and
write the result in the base's format (:class:`bytepair.formats.extended.Extension`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from bytepair._util.validate import check_int, parse_memory
from bytepair.counts.piece_counts import PieceCounts
from bytepair.counts.sources import count_sources
from bytepair.formats.bases import Base, from_tokenizer, read_base
from bytepair.formats.extended import Extension
from bytepair.learn.budget import check_limit_now
from bytepair.learn.extend import TokenTable, extend_rules
from bytepair.learn.loop import MemoryHook, ProgressHook
from bytepair.read.corpus import Documents, Files
from bytepair.read.paths import is_jsonl, is_parquet, open_file
from bytepair.training.counting import added, checkpoint_files, count_corpus, count_tables, read
from bytepair.training.spec import CountOptions, ReadOptions, count_identity

if TYPE_CHECKING:  # for annotations only
    import tokenizers

    from bytepair.model.spm_model import SentencePieceModel
    from bytepair.model.tokenizer import Tokenizer

#: Bytes read at a time when looking for added tokens in plain text files.
SCAN_BYTES = 1 << 24


def extend(base: str | os.PathLike | Tokenizer | tokenizers.Tokenizer | Base | SentencePieceModel,
           corpus: str | os.PathLike | Files | Iterable[str | bytes] | PieceCounts
           | Sequence[PieceCounts], *, vocab_size: int, min_frequency: int = 1,
           per_line: bool = False, jsonl_field: str | None = None, text_column: str | None = None,
           workers: int | None = None, progress: bool | None = None,
           max_memory: int | str | None = None, checkpoint: str | os.PathLike | None = None,
           resume: bool = False, pattern: str | None = None,
           special_tokens: dict[str, int] | Sequence[str] | str | os.PathLike | None = None,
           trust_pattern: bool = False, backend: str | None = None) -> Extension | SentencePieceModel:
    """Extend ``base`` to ``vocab_size`` tokens on ``corpus``, keeping every ID it has.

    ``base``: a path (``tokenizer.json``, a ``transformers`` directory, a tiktoken ranks file
    with ``pattern`` and ``special_tokens``, a bytepair model), a bytepair ``Tokenizer``, a
    ``tokenizers.Tokenizer`` or a :class:`~bytepair.formats.bases.Base`. ``vocab_size``
    counts every distinct ID, added tokens included. ``corpus`` and the reading options
    (``per_line``, ``jsonl_field``, ``text_column``) are as for :func:`bytepair.train` (count
    tables must be cut with the base's pattern). ``pattern`` and ``special_tokens``: for a
    tiktoken ranks file only, as :func:`bytepair.load` takes them. ``trust_pattern``: accept
    a base's custom regex (a ``tokenizer.json``'s Split, a bytepair model's pattern), as
    :func:`bytepair.load` does.
    ``min_frequency``: stop when the best pair is seen fewer times. ``workers``,
    ``progress``, ``max_memory``, ``checkpoint`` and ``resume`` as for :func:`bytepair.train`
    (the checkpoint keeps the counts of files). ``backend``: the pair engine's
    (``"compiled"`` or ``"python"``; default: as training picks it).

    Each piece starts as the base's encoding (merge-only, or lookup first with
    ``ignore_merges``); the greatest pair count wins, ties to the smallest ``(left, right)``
    in the base's IDs; a pair that spells a token the base has takes that token's ID.

    A sentencepiece BPE base (a ``.model`` file, or a
    :class:`~bytepair.model.spm_model.SentencePieceModel`) is extended by
    :func:`bytepair.training.spm_extend.extend_sentencepiece`, which returns the extended
    ``SentencePieceModel``; of the options above it takes ``workers`` (and ``per_line``,
    which it always is).

    >>> import bytepair
    >>> tok = bytepair.train(["low lower lowest"] * 3, vocab_size=260)
    >>> ext = extend(tok, ["newer newest"] * 4, vocab_size=262)
    >>> ext.added, ext.tokenizer().encode("low") == tok.encode("low")
    (2, True)
    """
    if is_sentencepiece_base(base):
        from bytepair.training.spm_extend import extend_sentencepiece

        _refuse_for_sentencepiece(min_frequency=min_frequency != 1, jsonl_field=jsonl_field,
                                  text_column=text_column, max_memory=max_memory,
                                  checkpoint=checkpoint, resume=resume, pattern=pattern,
                                  special_tokens=special_tokens, trust_pattern=trust_pattern,
                                  backend=backend)
        return extend_sentencepiece(base, corpus, vocab_size=vocab_size, workers=workers or 1)
    base = as_base(base, pattern=pattern, special_tokens=special_tokens,
                   trust_pattern=trust_pattern)
    check_int(vocab_size, "vocab_size", minimum=1)
    if vocab_size <= base.size:
        raise ValueError(f"vocab_size must be larger than the {base.size} tokens the base has "
                         f"(added tokens included), got {vocab_size}")
    check_int(min_frequency, "min_frequency", minimum=1)
    limit = parse_memory(max_memory) if max_memory is not None else None
    check_limit_now(limit)
    counts = count_pieces(base, corpus, ReadOptions(per_line, jsonl_field, text_column),
                          CountOptions(workers), progress, checkpoint, resume)
    data, starts, weights = counts.flat()
    tokens, offsets = base.encode_spans(data, starts, CountOptions(workers).threads)
    del data, starts
    if count_tables(corpus) is None:
        counts.release()  # made here: the engine holds the pieces from now on
    table = TokenTable(base.spellings())
    rules = extend_rules(tokens, offsets, weights, table, new_tokens=vocab_size - base.size,
                         min_frequency=min_frequency, first_rank=len(base.merges),
                         backend=backend, hooks=[MemoryHook(limit), ProgressHook(progress)])
    return Extension(base, rules, {m.token_id: table.spelled(m.token_id) for m in rules})


def is_sentencepiece_base(base) -> bool:
    """Whether ``base`` is a sentencepiece model: in memory, or a file that opens as one."""
    from bytepair.formats.foreign import is_sentencepiece
    from bytepair.model.spm_model import SentencePieceModel

    if isinstance(base, SentencePieceModel):
        return True
    if not isinstance(base, (str, os.PathLike)) or not os.path.isfile(base):
        return False
    with open(base, "rb") as handle:
        return is_sentencepiece(handle.read(1 << 16))


def _refuse_for_sentencepiece(**given) -> None:
    """One line naming the first option given that a sentencepiece base does not take."""
    for name, value in given.items():
        if value not in (None, False):
            raise ValueError(f"{name}: not an option for a sentencepiece base (it is extended on "
                             f"text files, one sentence a line, by spm_train's loop)")


def as_base(base, *, pattern=None, special_tokens=None, trust_pattern: bool = False) -> Base:
    """``base`` as a :class:`Base`, from whatever :func:`extend` takes."""
    if isinstance(base, Base):
        return base
    if isinstance(base, (str, os.PathLike)):
        return read_base(base, pattern=pattern, special_tokens=special_tokens,
                         trust_pattern=trust_pattern)
    to_str = getattr(base, "to_str", None)
    if callable(to_str):  # a tokenizers.Tokenizer
        import json

        from bytepair.formats.bases import from_tokenizers_document

        return from_tokenizers_document(json.loads(to_str()), trust_pattern=trust_pattern)
    return from_tokenizer(base)


def count_pieces(base: Base, corpus, reading: ReadOptions, counting: CountOptions,
                 progress: bool | None, checkpoint=None, resume: bool = False) -> PieceCounts:
    """The piece counts of ``corpus`` through the base's pipeline: count tables as given
    (cut with its pattern), files counted directly when neither its normalizer nor its
    added tokens can change them, else documents prepared in Python first."""
    tables = count_tables(corpus)
    if tables is not None:
        table = added(tables)
        if table.pattern != base.pattern or base.then:
            raise ValueError("corpus: the count tables were cut with another pattern than the "
                             "base's pre-tokenizer")
        return table
    sources = read(corpus, reading)
    if base.normalizer is None and not base.then and not _may_hold_added(sources, base):
        saved = None
        if checkpoint is not None:
            from bytepair.counts.checkpoint import Checkpoint

            files = checkpoint_files(sources, None)
            saved = Checkpoint(checkpoint, count_identity(files, base.pattern), resume=resume)
        return count_corpus(sources, base.pattern, counting, progress, saved)
    if checkpoint is not None:
        raise ValueError("checkpoint: this base's pipeline (a normalizer, several splits, or "
                         "added tokens in the text) prepares the documents in Python, which "
                         "cannot be resumed")
    if base.then:
        # Several splits in turn: the pieces are cut here, and each is counted whole.
        cut = base.cutter()
        pieces = (piece for segment in prepared(sources.documents(text=True), base)
                  for piece in cut(segment))
        return count_sources(Documents(pieces), None, workers=counting.threads)
    documents = Documents(prepared(sources.documents(text=True), base))
    return count_sources(documents, base.pattern, workers=counting.threads)


def prepared(documents: Iterable[str], base: Base) -> Iterator[str]:
    """The text between the base's added tokens, normalized: what its pre-tokenizer cuts."""
    for document in documents:
        for segment in base.segments(document):
            if isinstance(segment, str):
                yield segment


def _may_hold_added(sources, base: Base) -> bool:
    """Whether the corpus may hold an added token's text: plain text files are scanned for
    them (fast), anything else is taken to."""
    contents = [content.encode() for content, _ in base.added if content]
    if not contents:
        return False
    if not isinstance(sources, Files):
        return True
    longest = max(map(len, contents))
    for path in sources.paths:
        if is_jsonl(path) or is_parquet(path):
            return True
        with open_file(path) as handle:
            tail = b""
            while block := handle.read(SCAN_BYTES):
                window = tail + block
                if any(content in window for content in contents):
                    return True
                tail = window[-(longest - 1):] if longest > 1 else b""
    return False
