"""The counting stage's one door: what the read stage made of a corpus, counted the right way.

Files are counted in parts (by a cluster's workers with ``client``),
documents as a stream; the table is the same for any number of workers.
"""

from __future__ import annotations

from bytepair.read.corpus import Documents, Files
from bytepair.counts.cluster import count_on_cluster
from bytepair.counts.counting import count_files, count_pieces, counts_bytes
from bytepair.counts.piece_counts import PieceCounts


def check_client(sources: Files | Documents, client) -> None:
    """Refuse a cluster for documents given as an iterable: a cluster counts files only."""
    if client is not None and not isinstance(sources, Files):
        raise TypeError("client: a cluster counts files (paths, globs, URLs or Files), "
                        f"not {type(sources.iterable).__name__}")


def count_sources(sources: Files | Documents, pattern: str | None, *, workers: int, client=None,
                  progress_bar=None, count_memory: int | None = None) -> PieceCounts:
    """The piece counts of ``sources`` cut with ``pattern`` (a regex source, or None: no
    split), counted by ``workers`` here or by ``client``'s cluster; ``count_memory`` bounds
    the local tables (they spill to disk past it). O(corpus size)."""
    check_client(sources, client)
    if client is not None:
        return count_on_cluster(client, sources, pattern, progress_bar=progress_bar)
    if isinstance(sources, Files):
        return count_files(sources, pattern, workers=workers, progress_bar=progress_bar,
                           count_memory=count_memory)
    # Compiled counting takes the documents' bytes; the regex splitter takes text.
    documents = sources.documents(text=not counts_bytes(pattern))
    return count_pieces(documents, pattern, workers=workers, progress_bar=progress_bar,
                        count_memory=count_memory)
