"""Counting sentencepiece's words: files -> lines -> ``{normalised word: count}``, on worker processes.

Each file is cut at line ends into parts (:meth:`bytepair.Files.parts`); each part's
lines are normalised and cut into words (:class:`bytepair.split.spm_text.SentenceText`)
and counted; the tables are added. The table does not depend on how the work was split.
Memory follows the distinct words, not the corpus: no sentence is kept.

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
import os
from collections import Counter
from pathlib import Path
from typing import Sequence

from bytepair.read.corpus import Files
from bytepair.read.blocks import open_binary
from bytepair.split.spm_text import SentenceText, TextRules
from bytepair.counts.workers import process_pool, unordered
from bytepair._util.backend import extensions_wanted

try:
    if not extensions_wanted():
        raise ImportError("BYTEPAIR_NO_EXTENSIONS is set")
    from bytepair.counts._spm_count import count_identity
except ImportError:  # a pure-Python install: SentenceText counts every line
    count_identity = None

#: Files are counted in parts of about this many bytes.
PART_BYTES = 1 << 23


def count_block(data: bytes, text: SentenceText, *, compiled: bool | None = None) -> tuple[dict, int]:
    """Word counts of a buffer of lines and how many lines were too long. O(len(data)).

    With the ``identity`` rule the compiled counter reads the lines (``compiled``:
    default when it is built); the lines it hands back (not UTF-8, or holding the start
    of a meta piece) and every line under other rules go through ``text``.
    """
    rules = text.rules
    if compiled is None:
        compiled = count_identity is not None
    if compiled and rules.identity:
        firsts = bytes(sorted({piece.encode()[0] for piece in rules.meta_pieces if piece}))
        table, too_long, lines = count_identity(
            data, rules.max_sentence_length, rules.remove_extra_whitespaces, rules.add_dummy_prefix,
            rules.treat_whitespace_as_suffix, rules.allow_whitespace_only_pieces,
            rules.split_by_whitespace, firsts)
        if lines:
            for word in text.block_words(lines):
                table[word] = table.get(word, 0) + 1
        return table, too_long
    lines = data.split(b"\n")
    limit = rules.max_sentence_length
    too_long = sum(1 for line in lines if len(line) > limit)
    return Counter(text.block_words(lines)), too_long


def _read_part(path: Path, start: int, end: int | None) -> bytes:
    with open_binary(path) as handle:
        handle.seek(start)
        return handle.read() if end is None else handle.read(end - start)


def _count_part(job: tuple) -> tuple[dict, int]:
    path, start, end, rules = job
    return count_block(_read_part(path, start, end), SentenceText(rules))


def count_sentencepiece_words(paths: Sequence[str | os.PathLike], rules: TextRules, *,
                              workers: int = 1, part_bytes: int = PART_BYTES) -> tuple[Counter, int]:
    """``({word: count}, lines skipped as too long)`` of the lines of ``paths``, on ``workers`` processes."""
    files = Files(*paths, per_line=True)
    # Few large parts: each part's table is sent back and added here, in Python.
    total_bytes = sum(path.stat().st_size for path in files.paths)
    part_bytes = max(part_bytes, total_bytes // (2 * max(1, workers)) + 1)
    jobs = [(path, start, end, rules) for path, start, end in files.parts(part_bytes)]
    total: Counter = Counter()
    too_long = 0
    with contextlib.ExitStack() as stack:
        if workers > 1 and len(jobs) > 1:
            pool = stack.enter_context(process_pool(min(workers, len(jobs))))
            results = unordered(pool, _count_part, iter(jobs), 2 * workers, lambda job: str(job[0]))
        else:
            results = map(_count_part, jobs)
        for counts, skipped in results:
            if not total:
                total, counts = Counter(counts), None  # the first table is taken as it is
            else:
                total.update(counts)
            too_long += skipped
    return total, too_long
