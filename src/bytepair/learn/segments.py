"""The cold cut: train on the stretches of the sequences that a rule can still reach.

A *window* is two adjacent tokens of a sequence; its pair's count is the
weighted number of windows holding that pair. Three facts make a warm start
over many long sequences (SuperBPE's stage 2) much cheaper:

1. A merge of ``(a, b)`` into ``m`` replaces windows; the windows it creates
   are ``(t, m)`` where ``(t, a)`` was, and ``(m, u)`` where ``(b, u)`` was.
   So the pair at any one window can only be seen as often as, or less often
   than, the pair that was there before: *the count at a window never grows*.
2. Hence a window whose pair was counted fewer than ``floor`` times at the
   start (a *cold* window) holds a pair counted fewer than ``floor`` times for
   ever after, and a pair counted ``floor`` times or more lies on no cold
   window at all.
3. So while every rule learned is counted at least ``floor`` times, no merge
   replaces a cold window, and every pair that could be learned is counted
   exactly without the cold windows.

:func:`cut_cold` therefore cuts every sequence at its cold windows and keeps
each stretch of two or more tokens as a sequence of its own, with the
sequence's weight. Training on those stretches with ``min_frequency=floor`` learns
exactly the rules that training on the whole sequences learns, for as long as
the rules reach the floor. When a run stops short because no pair reaches
the floor (and the floor is above the caller's own ``min_frequency``), the rules
below it need the cold windows: :func:`fit` then cuts the sequences as they
stand after those rules again, at a lower floor, and goes on.
docs/design.md gives the proof in full.

The floor is chosen so that this rarely happens: the count of the
``merges``-th most counted pair at the start, divided by
:data:`FLOOR_DIVISOR`. Rules learned later count less than that pair did,
but the new pairs that merges create compete with it, so the last rule
usually counts well above half of it (at 100 MB of English, SuperBPE's
stage 2 ends at 67 with a floor of 54; on the benchmark corpora the last
rule counted 0.61 to 0.90 of the ``merges``-th count).

The compiled cut (``bytepair.learn._engine.cut_cold``) may keep a few cold
windows more than this plain version does (its set of hot pairs answers
"maybe" for about 3% of the others). Keeping a cold window costs a little
time and changes nothing: a pair on it counts less than the floor wherever
it is seen, so it is never learned above the floor.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Callable

from bytepair._util.backend import extensions_wanted
from bytepair.learn.superbpe import joined_shape

_compiled_cut = None
if extensions_wanted():
    try:
        from bytepair.learn._engine import cut_cold as _compiled_cut
    except ImportError:  # pragma: no cover - depends on how the package was installed
        pass

#: The floor is the count of the ``merges``-th most counted pair divided by this.
FLOOR_DIVISOR = 2

Arrays = tuple  # (tokens, starts, weights): flat sequences, as the engine reads them


def pair_counts(tokens, starts, weights) -> Counter:
    """The weighted count of every pair of adjacent tokens inside the sequences."""
    counts: Counter = Counter()
    for s, weight in enumerate(weights):
        sequence = tokens[starts[s]:starts[s + 1]]
        for window in zip(sequence, sequence[1:]):
            counts[window] += weight
    return counts


def choose_floor(counts: Counter, merges: int, *, divisor: int | None = None,
                 word_limit: tuple | None = None) -> int:
    """``merges``-th greatest count among the pairs a word cap allows, divided by ``divisor``
    (default :data:`FLOOR_DIVISOR`); 0 when fewer pairs are counted."""
    divisor = FLOOR_DIVISOR if divisor is None else divisor
    values = [c for (left, right), c in counts.items()
              if word_limit is None or _within_cap(left, right, word_limit)]
    if merges < 1 or len(values) < merges:
        return 0
    return sorted(values, reverse=True)[merges - 1] // divisor


def _within_cap(left: int, right: int, word_limit: tuple) -> bool:
    shapes, max_words = word_limit
    return joined_shape(shapes[left], shapes[right]) >> 2 <= max_words


def cut_cold_py(tokens, starts, weights, merges: int, *, floor: int = 0, min_frequency: int = 1,
                word_limit: tuple | None = None) -> tuple[int, Arrays | None]:
    """:func:`cut_cold` in plain Python: the specification of the compiled cut."""
    if word_limit is not None and len(tokens) and max(tokens) >= len(word_limit[0]):
        raise ValueError(f"shapes: {len(word_limit[0])} given, but the sequences hold token "
                         f"{max(tokens)}")
    counts = pair_counts(tokens, starts, weights)
    if floor <= 0:
        floor = choose_floor(counts, merges, word_limit=word_limit)
    floor = max(floor, min_frequency, 1)
    if floor <= 1:
        return 1, None
    narrow = isinstance(tokens, (bytes, bytearray))
    kept = bytearray() if narrow else array("I")
    kept_starts, kept_weights = array("q", [0]), array("q")
    for s, weight in enumerate(weights):
        lo, hi = starts[s], starts[s + 1]
        first = lo
        for i in range(lo, hi):
            if i + 1 < hi and counts[tokens[i], tokens[i + 1]] >= floor:
                continue  # a hot window: the stretch goes on
            if i > first:
                kept.extend(tokens[first:i + 1])
                kept_starts.append(len(kept))
                kept_weights.append(weight)
            first = i + 1
    return floor, (kept, kept_starts, kept_weights)


def cut_cold(tokens, starts, weights, merges: int, *, floor: int = 0, min_frequency: int = 1,
             word_limit: tuple | None = None, threads: int = 1) -> tuple[int, Arrays | None]:
    """The sequences' stretches joined by pairs counted at least ``floor`` times.

    ``tokens`` (``bytes``, ``bytearray`` or ``array("I")``), ``starts`` (one
    offset per sequence, then the total; ``array("q")``) and ``weights``
    (``array("q")``) are flat sequences, as the pair engine reads them.
    ``merges`` is how many rules the training will learn; ``floor`` (0: chosen,
    see :func:`choose_floor`) is raised to ``min_frequency``; ``word_limit``
    (``(shapes, max_words)``, SuperBPE's cap) leaves pairs over the cap out of
    the choice, since they are never learned. Returns ``(floor, arrays)``, the
    arrays in the same form with one sequence per stretch of two or more
    tokens, or ``(1, None)`` when the floor is 1 and nothing is cut. The
    compiled cut cuts on up to two ``threads``, with the same result. O(tokens).
    """
    if _compiled_cut is None:
        return cut_cold_py(tokens, starts, weights, merges, floor=floor, min_frequency=min_frequency,
                           word_limit=word_limit)
    shapes, max_words = word_limit if word_limit is not None else (None, 0)
    return _compiled_cut(tokens, starts, weights, merges, FLOOR_DIVISOR, floor, min_frequency,
                         shapes, max_words, threads)


def fit(sequences: Callable[[list], tuple], merges: int, build: Callable, run: Callable, *,
        min_frequency: int = 1, floor: int = 0, threads: int = 1) -> list:
    """Up to ``merges`` rules learned on the stretches :func:`cut_cold` keeps: exactly the
    rules of training on the whole sequences.

    ``sequences(learned)`` gives ``([tokens, starts, weights], word_limit)``:
    the sequences with the rules learned so far applied (a new list each time,
    which is emptied once it is no longer needed, so the caller should keep no
    other reference) and the word cap for their tokens, or None.
    ``build(tokens, starts, weights, learned, word_limit)`` makes an engine
    that goes on from ``learned``; ``run(engine, learned, min_frequency)`` learns
    with it up to ``merges`` rules in all and returns the new ones.

    The first run is on the stretches, with ``min_frequency`` raised to the floor
    (``floor``, or chosen). When it stops short below a floor greater than
    ``min_frequency``, the rules still to come need the cold windows: the
    sequences as they now stand are cut again, at a floor chosen from their
    counts, which is lower than the one before (every pair now counts less),
    and training goes on from there. So the floors fall at every turn, and
    a floor of ``min_frequency`` or 1 ends it. ``threads``: for the cut.
    """
    learned: list = []
    while True:
        arrays, word_limit = sequences(learned)
        floor, cut = cut_cold(*arrays, merges - len(learned), floor=floor, min_frequency=min_frequency,
                              word_limit=word_limit, threads=threads)
        if cut is None:  # nothing to cut: the whole sequences, down to min_frequency
            engine = build(*arrays, learned, word_limit)
            arrays.clear()
            return learned + run(engine, learned, min_frequency)
        arrays.clear()
        engine = build(*cut, learned, word_limit)
        del cut
        learned += run(engine, learned, floor)
        del engine
        if len(learned) >= merges or floor <= min_frequency:
            return learned
        floor = 0  # chosen anew from the counts as they now stand
