"""Counting sentencepiece's words: files -> lines -> ``{normalised word: count}``, on worker processes.

Each file is cut at line ends into parts (:meth:`bytepair.Files.parts`); each part's
lines are normalised and cut into words (:class:`bytepair.split.spm_text.SentenceText`)
and counted; the tables are added. The table does not depend on how the work was split.
Memory follows the distinct words, not the corpus: no sentence is kept.

>>> import tempfile, pathlib
>>> from bytepair.split.spm_text import TextRules
>>> path = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
>>> _ = path.write_text("a b\\n\\nb\\n")
>>> count_sentencepiece_words([path], TextRules(normalization_rule_name="identity"))
({'\u2581a': 1, '\u2581b': 2}, 0)
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

#: Files are counted in parts of about this many bytes.
PART_BYTES = 1 << 23


def count_lines(lines: Sequence[bytes], text: SentenceText) -> tuple[Counter, int]:
    """Word counts of ``lines`` and how many of them were too long. O(total characters)."""
    limit = text.rules.max_sentence_length
    too_long = sum(1 for line in lines if len(line) > limit)
    return Counter(text.block_words(lines)), too_long


def _read_part(path: Path, start: int, end: int | None) -> list[bytes]:
    with open_binary(path) as handle:
        handle.seek(start)
        data = handle.read() if end is None else handle.read(end - start)
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _count_part(job: tuple) -> tuple[Counter, int]:
    path, start, end, rules = job
    return count_lines(_read_part(path, start, end), SentenceText(rules))


def count_sentencepiece_words(paths: Sequence[str | os.PathLike], rules: TextRules, *,
                              workers: int = 1, part_bytes: int = PART_BYTES) -> tuple[dict[str, int], int]:
    """``({word: count}, lines skipped as too long)`` of the lines of ``paths``, on ``workers`` processes."""
    files = Files(*paths, per_line=True)
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
            total.update(counts)
            too_long += skipped
    return dict(total), too_long
