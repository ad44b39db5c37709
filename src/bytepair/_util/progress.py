"""Progress bars on stderr, drawn only when asked or when stderr is a terminal."""

from __future__ import annotations

import sys


def progress_bar(progress: bool | None, **options):
    """A ``tqdm`` bar on stderr with ``options``, or None when ``progress`` is false (None:
    only when stderr is a terminal). Callers ``update`` and ``close`` it when it is not None."""
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm  # here, not at import: importing tqdm costs more than all of bytepair

    return tqdm(file=sys.stderr, dynamic_ncols=True, **options)
