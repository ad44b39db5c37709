"""Counting sentencepiece's words: files -> lines -> ``{normalised word: count}``.

With the compiled modules, each file is read in blocks that end at line ends (mapped pages,
or gzip read in turn), and ``workers`` threads normalise, cut and count the blocks' lines
in compiled code without the GIL (:class:`bytepair.counts._spm_count.SentenceCounter`), each
into a piece table of its own (``bytepair.split._split.PieceTable``); the tables are summed
into flat arrays, then made one ``{word: count}``. Nothing is pickled, no sentence is kept:
memory follows the distinct words. With ``count_memory`` a table that passes its share is
written to disk as a sorted run and the runs are merged at the end
(:mod:`bytepair.counts.spill`). The table does not depend on how the work was split.

Without them (a pure-Python install), each file is cut into parts that worker processes
count with :class:`bytepair.split.spm_text.SentenceText`, the reference the compiled counter
is tested against.

>>> import tempfile, pathlib
>>> from bytepair.split.spm_text import TextRules
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> _ = path.write_text("a b\\n\\nb\\n")
>>> words, too_long = count_sentencepiece_words([path], TextRules(normalization_rule_name="identity"))
>>> sorted(words.items()), too_long
([('\u2581a', 1), ('\u2581b', 2)], 0)
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from array import array
from collections import Counter
from collections.abc import ItemsView, Mapping
from itertools import accumulate
from pathlib import Path
from typing import Iterator, Sequence

from bytepair.read.corpus import Files
from bytepair.read.blocks import file_blocks, open_binary
from bytepair.split import fastsplit
from bytepair.split.spm_text import SentenceText, TextRules
from bytepair.counts import counting
from bytepair.counts.piece_counts import PieceCounts
from bytepair.counts.spill import Spill
from bytepair.counts.workers import process_pool, unordered
from bytepair._util.backend import extensions_wanted

try:
    if not (extensions_wanted() and fastsplit.available()):
        raise ImportError("BYTEPAIR_NO_EXTENSIONS is set")
    from bytepair.counts import _spm_count
except ImportError:  # a pure-Python install: SentenceText counts every line
    _spm_count = None

#: The compiled counter reads files in blocks of about this many bytes.
BLOCK_BYTES = 1 << 22
#: ... and of at least this many under a tight ``count_memory``.
MIN_BLOCK_BYTES = 1 << 14
#: The Python path counts files in parts of about this many bytes.
PART_BYTES = 1 << 23


def compiled_counter(text: SentenceText):
    """The compiled :class:`~bytepair.counts._spm_count.SentenceCounter` of ``text``'s rules, or
    None without the compiled modules."""
    if _spm_count is None:
        return None
    rules = text.rules
    return _spm_count.SentenceCounter(
        text.charsmap(), rules.max_sentence_length, rules.remove_extra_whitespaces,
        rules.add_dummy_prefix, rules.treat_whitespace_as_suffix, rules.allow_whitespace_only_pieces,
        rules.split_by_whitespace, [piece.encode("utf-8", "surrogatepass") for piece in rules.meta_pieces])


def count_block(data: bytes, text: SentenceText, *, compiled: bool | None = None) -> tuple[dict, int]:
    """Word counts of a buffer of lines and how many lines were too long. O(len(data)).

    ``compiled`` (default: when it is built) counts with the compiled counter, else with
    ``text`` (the reference).
    """
    if compiled is None:
        compiled = _spm_count is not None
    if compiled:
        table = fastsplit.table()
        too_long = compiled_counter(text).count(table, data)
        return dict(_words(*table.arrays())), too_long
    lines = data.split(b"\n")
    limit = text.rules.max_sentence_length
    too_long = sum(1 for line in lines if len(line) > limit)
    return Counter(text.block_words(lines)), too_long


def count_sentencepiece_words(paths: Sequence[str | os.PathLike], rules: TextRules, *, workers: int = 1,
                              count_memory: int | None = None,
                              block_bytes: int = BLOCK_BYTES) -> tuple[Mapping[str, int], int]:
    """``({word: count}, lines skipped as too long)`` of the lines of ``paths``: a
    :class:`WordTable` with the compiled modules, else a dict.

    ``workers``: threads that count (processes without the compiled modules).
    ``count_memory`` (bytes; None: no bound) bounds the counting tables: one that passes
    its share is spilled to a temporary file and merged back at the end, with the same
    result. O(total bytes); memory: the distinct words plus a block per worker.
    """
    files = Files(*paths, per_line=True)
    text = SentenceText(rules)
    workers = max(1, workers)
    if _spm_count is None:
        return _count_in_processes(files, rules, workers, count_memory)
    counter = compiled_counter(text)
    too_long: list[int] = []
    lock = threading.Lock()

    def count(table, job: tuple) -> counting.Partial:
        data, progress = job
        skipped = counter.count(table, data)
        with lock:
            too_long.append(skipped)
        return counting.Partial(None, progress, os.getpid(), threading.get_ident())

    if count_memory is not None:
        # A block adds at most a few distinct words per 32 bytes of text (one in ~128 bytes of
        # table each): smaller blocks under a tight bound, so that no table passes it by much.
        block_bytes = min(block_bytes, max(MIN_BLOCK_BYTES, count_memory // (32 * (workers + 1))))
    with Spill(count_memory, workers + 1) as spill:
        add = counting._collector(Counter(), None, None, spill)
        tables = counting._on_threads(count, _blocks(files, block_bytes), workers, add, spill)
        counts = counting._piece_counts(Counter(), tables, None, spill)
    table = WordTable(*counts.flat())
    counts.release()
    return table, sum(too_long)


class WordTable(Mapping):
    """``{word: count}`` read from flat arrays (``data``, ``starts`` with the end last, ``counts``),
    in no particular order. Iterating makes one ``str`` at a time and keeps none: the merge
    loop reads the words through it without a dict of them (a hash table of a million words
    costs more than counting them). A lookup builds the dict once.

    >>> from array import array
    >>> table = WordTable("▁a▁".encode(), array("q", [0, 4, 7]), array("q", [2, 1]))
    >>> len(table), dict(table.items()) == {"▁a": 2, "▁": 1}, table["▁"]
    (2, True, 1)
    """

    def __init__(self, data: bytes, starts, counts):
        self._flat = (data, starts, counts)
        self._dict: dict | None = None

    def __len__(self) -> int:
        return len(self._flat[2])

    def __iter__(self) -> Iterator[str]:
        return _words(*self._flat[:2])

    def items(self) -> ItemsView:
        return _Items(self)

    def __getitem__(self, word: str) -> int:
        if self._dict is None:
            self._dict = dict(_words(*self._flat))
        return self._dict[word]

    def flat(self) -> tuple:
        """``(data, starts, counts)``: the words as UTF-8 end to end, as :class:`PieceCounts` holds them."""
        return self._flat

    def utf8_bytes(self) -> int:
        """The UTF-8 bytes of all the words together (at least their characters). O(1)."""
        return len(self._flat[0])

    def clear(self) -> None:
        """Let the arrays go (training does, once the merge loop holds the words)."""
        self._flat = (b"", array("q", [0]), array("q"))
        self._dict = None


class _Items(ItemsView):
    def __iter__(self):
        return _words(*self._mapping._flat)


def _words(data: bytes, starts, counts=None) -> Iterator:
    """The words of flat arrays as ``str`` (with ``counts``: ``(word, count)``), made one at a time."""
    if _spm_count is not None:
        return _spm_count.iter_words(data, starts, counts)
    words = (data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts, starts[1:]))
    return words if counts is None else zip(words, counts)


def count_sentencepiece_on_cluster(client, paths: Sequence[str | os.PathLike], rules: TextRules, *,
                                   part_bytes: int | None = None, progress_bar=None) -> tuple[WordTable, int]:
    """:func:`count_sentencepiece_words` on the workers of a Dask ``client``: each part of the
    files (:meth:`bytepair.Files.parts`, cut at line ends) is counted by a task, the tables are
    summed on the cluster and only the total comes back (:mod:`bytepair.counts.cluster`). The
    workers must see the files at the same paths. The same words as counting here.
    """
    from bytepair.counts.cluster import count_on_cluster

    files = Files(*paths, per_line=True)
    counts = count_on_cluster(client, files, None, part_bytes=part_bytes, progress_bar=progress_bar,
                              count=functools.partial(_cluster_part, rules))
    data, starts, numbers = counts.flat()
    counts.release()
    # The lines too long travel as the empty word (no word is empty).
    empty = next((i for i in range(len(numbers)) if starts[i] == starts[i + 1]), None)
    skipped = 0
    if empty is not None:
        skipped = numbers.pop(empty)
        starts.pop(empty)
    return WordTable(data, starts, numbers), skipped


def _cluster_part(rules: TextRules, path: str, start: int, end: int | None) -> PieceCounts:
    """One part's words as UTF-8, the lines too long as the count of the empty word; on a worker."""
    text = SentenceText(rules)
    data = _read_part(Path(path), start, end)
    if _spm_count is not None:
        table = fastsplit.table()
        too_long = compiled_counter(text).count(table, data)
        words, starts, counts = table.arrays()
    else:
        table, too_long = count_block(data, text, compiled=False)
        pieces = [word.encode("utf-8", "surrogatepass") for word in table]
        words, starts, counts = b"".join(pieces), array("q", [0]), array("q", table.values())
        starts.extend(accumulate(map(len, pieces)))
    if too_long:
        starts.append(starts[-1])
        counts.append(too_long)
    return PieceCounts.trusted_arrays(words, starts, counts, None)


def _blocks(files: Files, block_bytes: int) -> Iterator[tuple]:
    """``(block, bytes)`` of every file read as lines, whatever its suffix (as spm_train reads it)."""
    for path in files.paths:
        for _, data, progress in file_blocks(path, 0, None, per_line=True, cut_documents=False,
                                             block_bytes=block_bytes, mapped=True):
            yield data, progress


def _read_part(path: Path, start: int, end: int | None) -> bytes:
    with open_binary(path) as handle:
        handle.seek(start)
        return handle.read() if end is None else handle.read(end - start)


def _count_part(job: tuple) -> tuple[dict, int]:
    path, start, end, rules = job
    return count_block(_read_part(path, start, end), SentenceText(rules), compiled=False)


def _count_in_processes(files: Files, rules: TextRules, workers: int,
                        count_memory: int | None) -> tuple[WordTable, int]:
    """The Python path: parts of the files counted on ``workers`` processes, the tables added
    here (and spilled past ``count_memory``, as the compiled path spills)."""
    total_bytes = sum(path.stat().st_size for path in files.paths)
    part_bytes = max(PART_BYTES, total_bytes // (2 * workers) + 1)
    if count_memory is not None:  # the sum is looked at after each part
        part_bytes = min(part_bytes, max(MIN_BLOCK_BYTES, count_memory // 32))
    jobs = [(path, start, end, rules) for path, start, end in files.parts(part_bytes)]
    total: Counter = Counter()
    too_long = 0
    with contextlib.ExitStack() as stack:
        spill = stack.enter_context(Spill(count_memory))
        add = counting._collector(total, None, None, spill)
        if workers > 1 and len(jobs) > 1:
            pool = stack.enter_context(process_pool(min(workers, len(jobs))))
            results = unordered(pool, _count_part, iter(jobs), 2 * workers, lambda job: str(job[0]))
        else:
            results = map(_count_part, jobs)
        for counts, skipped in results:
            # Spilled runs hold bytes, in byte order: the words as UTF-8.
            add(counting.Partial(Counter({word.encode("utf-8", "surrogatepass"): n for word, n in counts.items()}),
                                 0, os.getpid(), 0))
            too_long += skipped
        table = counting._piece_counts(total, [], None, spill)
    return WordTable(*table.flat()), too_long
