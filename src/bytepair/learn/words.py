"""Word mode's merge loop: the compiled word engine, or its pure-Python twin.

Both learn the rules of :func:`bytepair.learn.naive.fit` over string symbols
(a word starts as its characters, plus the end-of-word symbol; a merged
symbol is its halves joined, and equal strings are one symbol; ties go to the
smallest ``(left, right)`` in string order).

* ``compiled``: ``bytepair.learn._words.WordEngine`` runs the whole loop in
  C++ on the words' UTF-8 bytes and compares symbols with ``memcmp``, which
  orders UTF-8 exactly as Python orders strings (by code point).
* ``python``: the incremental engine (:mod:`bytepair.learn.incremental`)
  with symbols interned as IDs and a ``SortedList`` keyed by the strings;
  its loop runs in Python, over the default pair engine.

The backend is chosen as byte mode's is (:func:`bytepair.learn.incremental.default_backend`:
``BYTEPAIR_BACKEND`` first, else compiled when importable).
"""

from __future__ import annotations

import warnings
from array import array
from itertools import accumulate
from typing import Sequence

from bytepair._util.backend import extensions_wanted
from bytepair.learn import incremental
from bytepair.learn.rules import Merge

WordEngine = None
if extensions_wanted():
    try:
        from bytepair.learn._words import WordEngine
    except ImportError:  # pragma: no cover - depends on how the package was installed
        pass


def word_backend(backend: str | None = None) -> str:
    """The word engine to use: ``backend`` when named, else the default (compiled when importable)."""
    name = backend or incremental.default_backend()
    if name not in incremental.BACKENDS:
        raise ValueError(f"backend must be one of {sorted(incremental.BACKENDS)}, got {name!r}")
    if name == "compiled" and WordEngine is None:
        if backend:
            raise ImportError("the compiled word engine bytepair.learn._words is not installed")
        warnings.warn("bytepair's compiled word engine is not importable; using the slower "
                      "pure-Python engine", RuntimeWarning, stacklevel=3)
        return "python"
    return name


def flatten(words: Sequence[str]) -> tuple[bytes, array]:
    """``(data, starts)``: the words' UTF-8 laid end to end, each word's offset and the end.

    >>> flatten(["ab", "", "é"])
    (b'ab\\xc3\\xa9', array('q', [0, 2, 2, 4]))
    """
    encoded = [word.encode("utf-8") for word in words]
    starts = array("q", [0])
    starts.extend(accumulate(map(len, encoded)))
    return b"".join(encoded), starts


def fit(data: bytes, starts: array, weights: array, merges: int, *, end_of_word: str | None,
        min_frequency: int = 1, with_sequences: bool = True, backend: str | None = None,
        ) -> tuple[list[Merge], list[tuple[str, ...]] | None]:
    """Word-mode rules from words laid end to end (see :func:`flatten`) with ``weights``.

    Returns up to ``merges`` rules (fewer when no pair has ``min_frequency``
    windows left), each a :class:`Merge` of strings, and, with
    ``with_sequences``, every word's final symbols in the order given.
    ``backend`` is ``"compiled"`` or ``"python"`` (default: :func:`word_backend`).
    The caller checks that the weighted windows stay below 2**63.

    >>> data, starts = flatten(["low", "lower", "newest", "widest"])
    >>> rules, _ = fit(data, starts, array("q", [5, 2, 6, 3]), 2, end_of_word=None)
    >>> [(m.left, m.right, m.count) for m in rules]
    [('e', 's', 9), ('es', 't', 9)]
    """
    if word_backend(backend) == "python":
        words = [data[a:b].decode("utf-8") for a, b in zip(starts, starts[1:])]
        return _fit_python(words, weights, merges, end_of_word, min_frequency, with_sequences)
    eow = end_of_word.encode("utf-8") if end_of_word is not None else None
    engine = WordEngine(data, starts, weights, eow)
    lefts, rights, counts, replacements = engine.fit(merges, min_frequency)
    names = engine.symbols()
    rules = [Merge(rank, names[left], names[right], names[left] + names[right], count, replaced)
             for rank, (left, right, count, replaced)
             in enumerate(zip(lefts, rights, counts, replacements))]
    return rules, engine.sequences() if with_sequences else None


def _fit_python(words: list[str], weights: Sequence[int], merges: int, end_of_word: str | None,
                min_frequency: int, with_sequences: bool):
    # Symbols are interned to integer IDs for the pair engine; the queue sorts
    # by the strings themselves, and a joined string that exists reuses its ID.
    keys: list[str] = []
    key_to_id: dict[str, int] = {}

    def intern(symbol: str) -> int:
        if symbol not in key_to_id:
            key_to_id[symbol] = len(keys)
            keys.append(symbol)
        return key_to_id[symbol]

    tail = [end_of_word] if end_of_word else []
    sequences = [array("I", map(intern, [*word, *tail])) for word in words]

    def join(left: int, right: int, rank: int) -> int:
        return intern(keys[left] + keys[right])

    # The pair engine is the default one (compiled unless BYTEPAIR_BACKEND says
    # python); only the loop and its queue run in Python.
    engine = incremental.IncrementalEngine(sequences, array("q", weights), join, keys=keys,
                                            key_to_id=key_to_id)
    del sequences
    rules = [
        Merge(m.rank, keys[m.left], keys[m.right], keys[m.token_id], m.count, m.replacements)
        for m in engine.steps(merges, min_frequency)
    ]
    if not with_sequences:
        return rules, None
    with incremental.gc_paused():
        return rules, [tuple(keys[t] for t in seq) for seq in engine.sequences(release=True)]
