"""Word counts of a corpus: what word mode trains on.

A word is a maximal run of characters that are not white space, as
``str.split()`` cuts text (Sennrich's ``learn_bpe`` reads its corpus the same
way). Local plain and gzip text is read in blocks that end at line ends (a
line end is white space, so no word is cut) and counted in compiled code
(``bytepair.split._wordsplit``) on ``workers`` threads, each into a table of
its own, merged at the end; the sum does not depend on how the blocks were
shared, so every number of workers gives the same counts. Other corpora
(JSON Lines, Parquet, URLs, documents in memory, or no compiled extension)
are read as documents and split in Python.
"""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import accumulate
from typing import Callable

from bytepair._util.backend import extensions_wanted
from bytepair.counts import counting
from bytepair.read.corpus import Files, read_corpus, reads_in_blocks
from bytepair.split import fastsplit

# The compiled word splitter counts into the compiled piece table.
_wordsplit = None
if extensions_wanted() and fastsplit.available():
    try:
        from bytepair.split import _wordsplit
    except ImportError:  # pragma: no cover - depends on how the package was installed
        _wordsplit = None


def _compiled_files(corpus) -> bool:
    return (_wordsplit is not None and isinstance(corpus, Files)
            and all(map(reads_in_blocks, corpus.paths)))


def count_words(corpus, *, workers: int = 1, block_bytes: int = counting.PART_BYTES,
                progress_bar=None) -> tuple[bytes, array, array]:
    """The distinct words of ``corpus`` and their counts, as flat arrays.

    ``corpus`` is a path, glob, :class:`bytepair.Files` or an iterable of
    ``str``/``bytes`` documents. Returns ``(data, starts, counts)``: every
    distinct word's UTF-8 laid end to end in ``data``, ``starts``
    (``array("q")``: each word's offset, then ``len(data)``) and ``counts``
    (``array("q")``), in no particular order. ``progress_bar`` (tqdm-like)
    is advanced by the bytes read. Invalid UTF-8 raises ValueError naming
    the file and byte offset. O(corpus size); memory O(distinct words) plus
    a block per worker.

    >>> data, starts, counts = count_words(["low lower", "low\\tlowest"])
    >>> sorted((data[a:b].decode(), n) for a, b, n in zip(starts, starts[1:], counts))
    [('low', 2), ('lower', 1), ('lowest', 1)]
    """
    corpus = read_corpus(corpus)
    if _compiled_files(corpus):
        return _count_files(corpus, max(1, workers), block_bytes, progress_bar)
    documents = corpus.documents(text=_wordsplit is None)
    if _wordsplit is not None:
        table = fastsplit.table()
        for index, document in enumerate(documents):
            bad = _wordsplit.count_words(table, document)
            if bad >= 0:
                raise ValueError(f"corpus[{index}]: invalid UTF-8 at byte offset {bad}")
            if progress_bar is not None:
                progress_bar.update(len(document))
        return table.arrays()
    counts: Counter = Counter()
    for document in documents:
        counts.update(word.encode("utf-8") for word in document.split())
        if progress_bar is not None:
            progress_bar.update(len(document))
    words = list(counts)
    starts = array("q", [0])
    starts.extend(accumulate(map(len, words)))
    return b"".join(words), starts, array("q", counts.values())


def _count_files(files: Files, workers: int, block_bytes: int, progress_bar) -> tuple:
    add: Callable = counting._collector(Counter(), progress_bar, None)

    def count(table, job: tuple) -> counting.Partial:
        path, offset, data, progress = job
        bad = _wordsplit.count_words(table, data)
        if bad >= 0:
            raise ValueError(f"{path}: invalid UTF-8 at byte offset {offset + bad}")
        return counting._partial(None, progress)

    # Blocks end at line ends, which are white space: no word is cut.
    jobs = files.blocks(block_bytes, cut_documents=False, per_line=True)
    tables = counting._on_threads(count, jobs, workers, add)
    return counting._merged(tables).arrays()
