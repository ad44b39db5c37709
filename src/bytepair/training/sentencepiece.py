"""Training a sentencepiece BPE model exactly as spm_train (sentencepiece 0.2.3) does.

:func:`train_sentencepiece` reads like the pipeline: lines -> words (normalised and counted
on threads; :mod:`bytepair.counts.spm_words`) -> the kept characters
(:mod:`bytepair.learn.spm_chars`) -> the merge loop (:mod:`bytepair.learn.spm_loop`) ->
a :class:`~bytepair.model.spm_model.SentencePieceModel` (meta pieces, merged pieces,
characters), which writes the ``.model`` file sentencepiece loads.

Options take spm_train's names and defaults (:class:`SentencePieceOptions`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from bytepair._util.validate import format_memory, parse_memory
from bytepair.split.spm_text import RULES, TextRules
from bytepair.counts.piece_counts import PieceCounts
from bytepair.counts.spm_words import WordTable, count_sentencepiece_on_cluster, count_sentencepiece_words
from bytepair.learn.spm_chars import char_counts, masked_words, required_chars
from bytepair.learn.spm_loop import CompiledWords, SpmLoop, learn_pieces
from bytepair.learn.spm_pieces import PieceRules
from bytepair.read.corpus import Files
from bytepair.learn.budget import (FORECAST_ERROR, MemoryLimitError, can_sample, check_limit_now,
                                   forecast_counted, resident_bytes)
from bytepair.model.spm_model import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, SentencePieceModel

if TYPE_CHECKING:  # for annotations only
    import distributed


@dataclass(frozen=True)
class SentencePieceOptions:
    """spm_train's BPE options that bytepair takes, with spm_train's names and defaults."""

    vocab_size: int = 8000
    character_coverage: float = 0.9995
    byte_fallback: bool = False
    split_digits: bool = False
    split_by_whitespace: bool = True
    split_by_unicode_script: bool = True
    split_by_number: bool = True
    treat_whitespace_as_suffix: bool = False
    allow_whitespace_only_pieces: bool = False
    max_sentencepiece_length: int = 16
    max_sentence_length: int = 4192
    normalization_rule_name: str = "nmt_nfkc"
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    user_defined_symbols: tuple[str, ...] = ()
    control_symbols: tuple[str, ...] = ()
    unk_id: int = 0
    bos_id: int = 1
    eos_id: int = 2
    pad_id: int = -1
    unk_piece: str = "<unk>"
    bos_piece: str = "<s>"
    eos_piece: str = "</s>"
    pad_piece: str = "<pad>"
    hard_vocab_limit: bool = True
    #: The options the caller gave (written to the model's trainer_spec, as spm_train does).
    given: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self):
        if not 0.98 <= self.character_coverage <= 1.0:
            raise ValueError(f"character_coverage: {self.character_coverage} is outside [0.98, 1]")
        if not 1 <= self.max_sentencepiece_length <= 512:
            raise ValueError(f"max_sentencepiece_length: {self.max_sentencepiece_length} is outside [1, 512]")
        if not 10 <= self.max_sentence_length <= 1 << 30:
            raise ValueError(f"max_sentence_length: {self.max_sentence_length} is outside [10, 2**30]")
        if self.normalization_rule_name not in RULES:
            raise ValueError(f"normalization_rule_name: {self.normalization_rule_name!r} is not one of "
                             f"{', '.join(RULES)}")
        if self.vocab_size <= 0:
            raise ValueError(f"vocab_size: {self.vocab_size} must be positive")

    @classmethod
    def of(cls, **options) -> SentencePieceOptions:
        """The options from keywords, one clear error for a name spm_train has but bytepair lacks."""
        known = {f.name for f in fields(cls)} - {"given"}
        for name in options:
            if name not in known:
                raise TypeError(f"{name}: not a sentencepiece BPE option bytepair supports "
                                f"(supported: {', '.join(sorted(known))})")
        for name in ("user_defined_symbols", "control_symbols"):
            if isinstance(options.get(name), str):
                options[name] = tuple(s for s in options[name].split(",") if s)
            elif name in options:
                options[name] = tuple(options[name])
        return cls(**options, given=tuple(options))

    def meta_pieces(self, *, sized: bool = True) -> dict[int, tuple[str, int]]:
        """ID -> (piece, type) of the meta pieces, as spm_train places them (InitMetaPieces).
        ``sized``: each ID must be below ``vocab_size`` (counting, which has no size, says False)."""
        meta: dict[int, tuple[str, int]] = {}
        for name, kind in (("unk", UNKNOWN), ("bos", CONTROL), ("eos", CONTROL), ("pad", CONTROL)):
            at, piece = getattr(self, f"{name}_id"), getattr(self, f"{name}_piece")
            if at < 0:
                continue
            if (sized and at >= self.vocab_size) or at in meta:
                raise ValueError(f"{name}_id: {at} is taken or not below vocab_size {self.vocab_size}")
            meta[at] = (piece, kind)
        if self.unk_id < 0 and not self.byte_fallback:
            raise ValueError(f"unk_id: {self.unk_piece} must be defined (or byte_fallback)")
        special = {self.bos_piece: self.bos_id, self.eos_piece: self.eos_id, self.pad_piece: self.pad_id}
        extra = [(s, CONTROL) for s in self.control_symbols]
        extra += [(s, USER_DEFINED) for s in self.user_defined_symbols]
        if self.byte_fallback:
            extra += [(f"<0x{b:02X}>", BYTE) for b in range(256)]
        seen: set[str] = set()
        free = 0
        for piece, kind in extra:
            if piece in seen or piece == self.unk_piece:
                raise ValueError(f"symbols: {piece!r} is defined twice")
            seen.add(piece)
            if special.get(piece, -1) >= 0:
                meta[special[piece]] = (piece, kind)
                continue
            while free in meta:
                free += 1
            meta[free] = (piece, kind)
        return meta

    def text_rules(self, *, sized: bool = True) -> TextRules:
        """The rules that turn lines into words (``sized`` as :meth:`meta_pieces`)."""
        names = {f.name for f in fields(TextRules)} - {"meta_pieces", "precompiled_charsmap"}
        metas = tuple(piece for piece, _ in self.meta_pieces(sized=sized).values())
        return TextRules(**{n: getattr(self, n) for n in names}, meta_pieces=metas)

    def piece_rules(self) -> PieceRules:
        return PieceRules(**{f.name: getattr(self, f.name) for f in fields(PieceRules)})


_OPTION_NAMES = frozenset(f.name for f in fields(SentencePieceOptions))


def pieces_from_words(words: dict[str, int], options: SentencePieceOptions, *,
                      release: bool = False) -> list[tuple[str, float, int]]:
    """The model's ``(piece, score, type)`` list from the normalised word counts.

    ``release`` empties ``words`` as the loop takes them in (its memory is then free for the loop).
    """
    meta = options.meta_pieces()
    held = CompiledWords(words, options.piece_rules(), release=release) if SpmLoop is not None else None
    counts = held.char_counts if held is not None else char_counts(words)
    kept = required_chars(words, options.character_coverage, counts)
    room = options.vocab_size - len(meta) - len(kept)
    if room < 0:
        raise ValueError(f"vocab_size: {options.vocab_size} is smaller than the meta pieces and "
                         f"characters kept ({len(meta) + len(kept)}); raise it or lower character_coverage")
    if held is not None:
        if release:
            words.clear()
        merged = held.learn([char for char, _ in kept], room)
    else:
        masked = masked_words(words, dict(kept))
        if release:
            words.clear()
        merged = learn_pieces(masked, room, options.piece_rules(), compiled=False)
    final = merged + [char for char, _ in kept]
    if options.hard_vocab_limit and len(meta) + len(final) < options.vocab_size:
        raise ValueError(f"vocab_size: {options.vocab_size} is too high for this corpus; "
                         f"set it to a value <= {len(meta) + len(final)}")
    pieces: list[tuple[str, float, int]] = []
    made = iter(enumerate(final))
    for at in range(len(meta) + len(final)):
        if at in meta:
            pieces.append((meta[at][0], 0.0, meta[at][1]))
        else:
            i, piece = next(made)
            pieces.append((piece, -float(i), NORMAL))
    return pieces


def train_sentencepiece(corpus: str | os.PathLike | Iterable[str | os.PathLike] | PieceCounts | Sequence[PieceCounts],
                        *, vocab_size: int, workers: int = 1, report: Callable[[str], object] | None = None,
                        count_memory: int | str | None = None, max_memory: int | str | None = None,
                        client: distributed.Client | None = None, **options: object) -> SentencePieceModel:
    """A sentencepiece BPE model trained on text files, equal to spm_train's with the same options.

    ``corpus`` is a file or a list of files, one sentence a line, or count tables of their
    words (:func:`count_sentencepiece`; a :class:`~bytepair.PieceCounts` or a list of them,
    added up; see :func:`train_from_tables`). ``vocab_size``: the number
    of pieces, meta pieces included, as spm_train's (fewer only without
    ``hard_vocab_limit``). ``workers``: the threads that count the lines (processes in a
    pure-Python install). ``count_memory`` (bytes, or a size such as ``"1GiB"``; None: no
    bound) bounds the word-counting tables: past it they are spilled to TMPDIR and merged
    back, with the same model. ``client``: a Dask ``distributed.Client`` whose workers count
    the words instead (they must see the files at the same paths). ``max_memory`` (a size, or
    None) keeps the whole run within it: the counting tables get a third of it (or
    ``count_memory``, if smaller), and the merge loop's need is estimated from the words before
    it starts, with :class:`~bytepair.MemoryLimitError` if it does not fit. ``options`` are
    spm_train's (:class:`SentencePieceOptions`); an option of spm_train's that bytepair lacks is
    refused.
    ``report``: a callable given a message (a ``str``) saying how many lines were skipped as
    too long, when any were.
    """
    tables = sentencepiece_tables(corpus)
    if tables is not None:
        for name, value, default in (("workers", workers, 1), ("count_memory", count_memory, None),
                                     ("client", client, None)):
            if value != default:
                raise ValueError(f"{name}: has no effect with count tables (the words are already counted)")
        return train_from_tables(tables, vocab_size=vocab_size, report=report, max_memory=max_memory,
                                 **options)
    options = SentencePieceOptions.of(vocab_size=vocab_size, **options)
    if count_memory is not None:
        count_memory = parse_memory(count_memory, "count_memory")
    limit = None if max_memory is None else parse_memory(max_memory, "max_memory")
    check_limit_now(limit)
    paths = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    if limit is not None:
        count_memory = min(limit // 3, count_memory or limit)
        if client is None:
            check_words_forecast(paths, options.text_rules(), limit)
    words, skipped = _count_words(paths, options.text_rules(), workers, count_memory, client, report)
    if limit is not None:
        check_loop_memory(words, limit)
    return SentencePieceModel(pieces_from_words(words, options, release=True), options=options,
                              skipped_lines=skipped)


#: The options that decide the words (:class:`TextRules`, the meta pieces that are boundaries in
#: the text): what :func:`count_sentencepiece` takes.
WORD_OPTIONS = ("normalization_rule_name", "add_dummy_prefix", "remove_extra_whitespaces",
                "treat_whitespace_as_suffix", "allow_whitespace_only_pieces", "split_by_whitespace",
                "max_sentence_length")
META_OPTIONS = ("byte_fallback", "user_defined_symbols", "control_symbols", "unk_id", "bos_id",
                "eos_id", "pad_id", "unk_piece", "bos_piece", "eos_piece", "pad_piece")


def count_sentencepiece(corpus: str | os.PathLike | Iterable[str | os.PathLike], *, workers: int = 1,
                        count_memory: int | str | None = None, client: distributed.Client | None = None,
                        report: Callable[[str], object] | None = None, **options: object) -> PieceCounts:
    """The sentencepiece words of ``corpus`` (a file or files, one sentence a line) as a count
    table: the normalised words (UTF-8) and their counts, with the text rules that made them.
    Save it (:meth:`PieceCounts.save`) and train many sizes from it with
    :func:`train_sentencepiece`; tables of shards add up.

    ``options`` are the spm_train options that decide the words (:data:`WORD_OPTIONS`, and
    :data:`META_OPTIONS`: the meta pieces are boundaries in the text); the others decide the
    model and are given when training. ``workers``, ``count_memory``, ``client`` and ``report``
    as in :func:`train_sentencepiece`. O(corpus bytes); memory: the distinct words.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
    >>> _ = path.write_text("a b\\nb\\n")
    >>> table = count_sentencepiece(path, normalization_rule_name="identity")
    >>> sorted(table.items()), table.sentencepiece.normalization_rule_name
    ([(b'\\xe2\\x96\\x81a', 1), (b'\\xe2\\x96\\x81b', 2)], 'identity')
    """
    for name in options:
        if name not in WORD_OPTIONS + META_OPTIONS and name in _OPTION_NAMES:
            raise TypeError(f"{name}: decides the model, not the words; give it when training "
                            f"from the table")
    rules = SentencePieceOptions.of(**options).text_rules(sized=False)
    if count_memory is not None:
        count_memory = parse_memory(count_memory, "count_memory")
    paths = [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)
    words, skipped = _count_words(paths, rules, workers, count_memory, client, report)
    return PieceCounts.trusted_arrays(*words.flat(), None, sentencepiece=rules, skipped_lines=skipped)


def sentencepiece_tables(corpus) -> list[PieceCounts] | None:
    """The tables when ``corpus`` is a :class:`PieceCounts` or a list of them, else None; a table
    of pre-tokenized pieces is refused (its pieces are not sentencepiece's words)."""
    if isinstance(corpus, PieceCounts):
        tables = [corpus]
    elif isinstance(corpus, (list, tuple)) and corpus and all(isinstance(c, PieceCounts) for c in corpus):
        tables = list(corpus)
    else:
        return None
    if any(table.sentencepiece is None for table in tables):
        raise ValueError("corpus: a table of pre-tokenized pieces cannot train a sentencepiece model; "
                         "count the files with --sentencepiece (bytepair.count_sentencepiece)")
    return tables


def train_from_tables(tables: Sequence[PieceCounts], *, vocab_size: int,
                      report: Callable[[str], object] | None = None,
                      max_memory: int | str | None = None, **options: object) -> SentencePieceModel:
    """:func:`train_sentencepiece` from count tables of sentencepiece words, added up: the same
    model as from the files they were counted from.

    The tables must share their text rules. An option of :data:`WORD_OPTIONS` that is not given
    is the tables' (and written to the model as given, when it is not spm_train's default); one
    that is given must equal theirs. The meta pieces (:data:`META_OPTIONS`) must be the ones the
    tables were counted with. A mismatch is refused in one line naming the option and both values.
    ``max_memory``: the merge loop's need is checked before it starts.
    """
    try:
        table = tables[0] if len(tables) == 1 else sum(tables)
    except ValueError as exc:
        raise ValueError(f"corpus: {exc}") from None
    rules = table.sentencepiece
    defaults = SentencePieceOptions()
    for name in WORD_OPTIONS:
        theirs = getattr(rules, name)
        if name not in options and theirs != getattr(defaults, name):
            options[name] = theirs
        elif name in options and options[name] != theirs:
            raise ValueError(f"{name}: {options[name]!r} is not the count tables' {theirs!r}; leave it "
                             f"out to train with the tables' rules, or count the files again with it")
    options = SentencePieceOptions.of(vocab_size=vocab_size, **options)
    differ = options.text_rules().difference(rules)
    if differ is not None:
        _, mine, theirs = differ
        raise ValueError(f"meta pieces: this training's are not the count tables' (only this training "
                         f"has {mine}; only the tables have {theirs}); count with the same "
                         f"{', '.join(META_OPTIONS[:3])} and unk/bos/eos/pad pieces")
    limit = None if max_memory is None else parse_memory(max_memory, "max_memory")
    check_limit_now(limit)
    _report_skipped(report, table.skipped_lines, rules.max_sentence_length)
    words, skipped = WordTable(*table.flat()), table.skipped_lines
    if len(tables) > 1:
        table.release()  # the sum is this call's own: the loop's copy replaces it
    if limit is not None:
        check_loop_memory(words, limit)
    return SentencePieceModel(pieces_from_words(words, options, release=True), options=options,
                              skipped_lines=skipped)


def _count_words(paths: list, rules: TextRules, workers: int, count_memory: int | None, client,
                 report) -> tuple[WordTable, int]:
    """The words of the files and the lines skipped as too long, on threads or the cluster."""
    if client is not None:
        words, skipped = count_sentencepiece_on_cluster(client, paths, rules)
    else:
        words, skipped = count_sentencepiece_words(paths, rules, workers=workers, count_memory=count_memory)
    _report_skipped(report, skipped, rules.max_sentence_length)
    return words, skipped


def _report_skipped(report, skipped: int, length: int) -> None:
    if report is not None and skipped:
        report(f"skipped {skipped} lines longer than max_sentence_length ({length} bytes), as spm_train does")


#: What the compiled merge loop holds per position of the words (a character or a word's
#: marker): 4 bytes of the words' array, the pairs' position lists (about a third of the
#: positions, with their stale entries), and each pair's state (a pair per ~30 positions at
#: 100 MB of English, ~100 bytes each). Measured with ``benches/spm_loop.py``, rounded up.
LOOP_BYTES_PER_POSITION = 10


def check_loop_memory(words, limit: int) -> None:
    """Refuse, before the merge loop, words whose loop would take this process past ``limit``.

    The positions are at most the words' UTF-8 bytes plus one marker each (a WordTable knows its
    bytes; a dict is measured).
    """
    flat = getattr(words, "utf8_bytes", None)
    characters = flat() if flat is not None else sum(len(word) for word in words)
    need = LOOP_BYTES_PER_POSITION * (characters + len(words) + 1)
    held = resident_bytes()
    if held + need > limit:
        raise MemoryLimitError("max_memory", f": the merge loop needs about {format_memory(need)} for "
                               f"{len(words):,} distinct words on top of the {format_memory(held)} held, "
                               f"more than {format_memory(limit)}")


def words_need(utf8_bytes: int, words: int) -> int:
    """What the counted words take at their peak: their table (the bytes, a start and a count
    each), then the merge loop's copy of them."""
    return utf8_bytes + 16 * words + LOOP_BYTES_PER_POSITION * (utf8_bytes + words + 1)


def check_words_forecast(paths: list, rules, limit: int) -> None:
    """Refuse at once, before any counting, a corpus whose words will not fit in ``limit``:
    their distinct bytes and number forecast from a sample spread over the files (Heaps' law,
    as :func:`bytepair.learn.budget.forecast`), unless the forecast could be that much too high."""
    from bytepair.counts.spm_words import compiled_counter
    from bytepair.split.spm_text import SentenceText

    files = Files(*paths, per_line=True)
    counter = compiled_counter(SentenceText(rules))
    if counter is None or not can_sample(files):
        return
    seen = forecast_counted(files, counter.count)
    if seen is None:
        return
    held = resident_bytes()
    least = held + words_need(seen.positions[0], seen.pieces[0])
    if least > limit:
        expected = held + words_need(seen.positions[1], seen.pieces[1])
        raise MemoryLimitError(
            "max_memory", f": training this corpus needs about {format_memory(expected)} for about "
            f"{seen.pieces[1]:,} distinct words (forecast from {format_memory(seen.sample)} read across its "
            f"{format_memory(seen.total)}), more than the limit of {format_memory(limit)} even if the "
            f"forecast is {FORECAST_ERROR:.0%} high; nothing was counted (a corpus that repeats its own "
            f"text is forecast too high: count_memory bounds the counting alone, with no forecast)")

