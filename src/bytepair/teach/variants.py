"""The course's five broken ways to learn BPE, each one piece of a round gone wrong.

A round of BPE has three pieces: **count** every adjacent window of every
row (a word or a document), **choose** the pair with the greatest count
(ties to the smallest ``(left, right)``), and **replace** its non-overlapping
matches in one left-to-right pass per row. :func:`fit_with` runs rounds from
those pieces. With its defaults it *is* the reference trainer,
:func:`bytepair.learn.naive.fit`, which it calls: the correct variant has no loop
of its own. A broken variant swaps in one broken piece, and only then do the
rounds run here, from the same reference pieces (:func:`bytepair.learn.rules.count_pairs`,
:func:`bytepair.learn.rules.priority`, :func:`bytepair.learn.rules.replace_pair`)
but for the one swapped in:

``first-occurrence``  :func:`replace_first_occurrence`: the rule is applied
    at the first match of the corpus only; later matches stay unmerged.
``deduplicated``      :func:`count_pairs_deduplicated`: a pair counts once per
    row however often it occurs there.
``overlapping``       :func:`replace_overlapping`: every matching window
    emits the new token, so one input token feeds two output tokens
    (``a a a`` becomes ``aa aa``).
``across-boundaries`` :func:`fit_across_boundaries`: the rows are laid end to
    end as one sequence, so pairs form across words and documents.
``arbitrary-ties``    :func:`choose_first_seen`: ties go to the pair seen
    first (``max(counts, key=counts.get)``), so the order of the words
    decides the rules.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Hashable, NamedTuple, Sequence

from bytepair.learn import naive
from bytepair.learn.rules import Merge, count_pairs, priority, replace_pair

Rows = list[list]
Pair = tuple[Hashable, Hashable]


# -- the reference pieces -----------------------------------------------------

def choose_smallest(counts: Counter) -> tuple[Pair, int]:
    """The documented choice: greatest count, ties to the smallest ``(left, right)``.

    >>> choose_smallest(Counter({("o", "w"): 3, ("l", "o"): 3, ("w", "e"): 2}))
    (('l', 'o'), 3)
    """
    pair, count = min(counts.items(), key=lambda item: priority(item[1], *item[0]))
    return pair, count


def replace_everywhere(rows: Rows, weights: Sequence[int], left, right, new) -> tuple[Rows, int]:
    """The documented pass: every row, left to right, non-overlapping; weighted match count."""
    out, replaced = [], 0
    for row, weight in zip(rows, weights):
        merged, matches = replace_pair(row, left, right, new)
        out.append(merged)
        replaced += matches * weight
    return out, replaced


# -- the broken pieces ----------------------------------------------------------

def count_pairs_deduplicated(rows: Sequence[Sequence], weights: Sequence[int]) -> Counter:
    """Broken count: each distinct pair once per row (times its weight).

    >>> count_pairs_deduplicated([["a", "a", "a"]], [1])
    Counter({('a', 'a'): 1})
    """
    counts: Counter = Counter()
    for row, weight in zip(rows, weights):
        for pair in dict.fromkeys(zip(row, row[1:])):
            counts[pair] += weight
    return counts


def replace_first_occurrence(rows: Rows, weights: Sequence[int], left, right,
                             new) -> tuple[Rows, int]:
    """Broken pass: only the corpus's first match is replaced; every other row is copied.

    >>> replace_first_occurrence([["l", "o", "w"], ["l", "o"]], [1, 1], "l", "o", "lo")
    ([['lo', 'w'], ['l', 'o']], 1)
    """
    out = [list(row) for row in rows]
    for r, row in enumerate(out):
        for i in range(len(row) - 1):
            if row[i] == left and row[i + 1] == right:
                row[i:i + 2] = [new]
                return out, weights[r]
    return out, 0


def overlapping_pass(sequence: Sequence, left, right, new) -> tuple[list, int, list[int]]:
    """Broken pass over one row: every matching window emits ``new``, overlapping ones too.

    Returns the output, its number of ``new`` tokens, and the output positions
    of the tokens that reused an input token already consumed by the token
    before them.

    >>> overlapping_pass(["a", "a", "a"], "a", "a", "aa")
    (['aa', 'aa'], 2, [1])
    >>> overlapping_pass(["a", "b", "a", "b"], "a", "b", "ab")
    (['ab', 'ab'], 2, [])
    """
    out, reused = [], []
    matches, i, n = 0, 0, len(sequence)
    while i < n:
        if i + 1 < n and sequence[i] == left and sequence[i + 1] == right:
            # A run of overlapping windows: each one emits, sharing its left token.
            out.append(new)
            matches += 1
            while i + 2 < n and sequence[i + 1] == left and sequence[i + 2] == right:
                reused.append(len(out))
                out.append(new)
                matches += 1
                i += 1
            i += 2
        else:
            out.append(sequence[i])
            i += 1
    return out, matches, reused


def replace_overlapping(rows: Rows, weights: Sequence[int], left, right, new) -> tuple[Rows, int]:
    """Broken pass: :func:`overlapping_pass` in every row."""
    out, replaced = [], 0
    for row, weight in zip(rows, weights):
        merged, matches, _ = overlapping_pass(row, left, right, new)
        out.append(merged)
        replaced += matches * weight
    return out, replaced


def choose_first_seen(counts: Counter) -> tuple[Pair, int]:
    """Broken choice: ties go to the pair counted first (the order of the input decides).

    >>> choose_first_seen(Counter({("o", "w"): 3, ("l", "o"): 3}))
    (('o', 'w'), 3)
    """
    pair = max(counts, key=counts.get)
    return pair, counts[pair]


# -- rounds -------------------------------------------------------------------------

def fit_with(rows: Sequence[Sequence], weights: Sequence[int], merges: int,
             join: Callable[[Hashable, Hashable, int], Hashable], *,
             count: Callable = count_pairs, choose: Callable = choose_smallest,
             replace: Callable = replace_everywhere,
             on_round: Callable[[Counter, Merge, Rows, Rows], None] | None = None,
             first_rank: int = 0) -> tuple[list[Merge], Rows]:
    """Up to ``merges`` rounds of count, choose, replace; returns the rules and the rows.

    ``on_round(counts, rule, before, after)`` sees each round. Ranks start at
    ``first_rank``: a round depends only on the rows, so the rows after ``k``
    rounds with ``first_rank=k`` continue a run exactly. With the default
    pieces the rounds are :func:`bytepair.learn.naive.fit`'s own; with a broken
    piece they run here, the reference's loop with that piece swapped in.
    Cost: ``O(merges x corpus)``.

    >>> rules, rows = fit_with([["a", "a", "a"]], [1], 1, lambda l, r, rank: l + r)
    >>> rules[0].count, rules[0].replacements, rows
    (2, 1, [['aa', 'a']])
    >>> rules, rows = fit_with([["a", "a", "a"]], [1], 1, lambda l, r, rank: l + r,
    ...                        replace=replace_overlapping)
    >>> rules[0].replacements, rows
    (2, [['aa', 'aa']])
    """
    if count is count_pairs and choose is choose_smallest and replace is replace_everywhere:
        return _reference_rounds(rows, weights, merges, join, on_round, first_rank)
    current = [list(row) for row in rows]
    rules: list[Merge] = []
    for rank in range(first_rank, first_rank + merges):
        counts = count(current, weights)
        if not counts:
            break
        (left, right), n = choose(counts)
        new = join(left, right, rank)
        before = current
        current, replaced = replace(current, weights, left, right, new)
        rules.append(Merge(rank, left, right, new, n, replaced))
        if on_round is not None:
            on_round(counts, rules[-1], before, current)
    return rules, current


def _reference_rounds(rows, weights, merges, join, on_round, first_rank):
    """:func:`bytepair.learn.naive.fit`, its rounds shown as :func:`fit_with` shows them."""
    if on_round is None:
        return naive.fit(rows, weights, merges, join, first_rank=first_rank)
    before = [list(row) for row in rows]

    def seen(counts, rule, after):
        nonlocal before
        # The reference replaces each row by a new list and never changes one: a shallow copy
        # is this round's rows, and the rows before the next.
        now = list(after)
        on_round(counts, rule, before, now)
        before = now

    return naive.fit(rows, weights, merges, join, on_round=seen, first_rank=first_rank)


def laid_end_to_end(rows: Sequence[Sequence], weights: Sequence[int]) -> list:
    """The rows as one sequence, each written out ``weight`` times: what has no barriers."""
    stream: list = []
    for row, weight in zip(rows, weights):
        for _ in range(weight):
            stream.extend(row)
    return stream


def fit_across_boundaries(rows: Sequence[Sequence], weights: Sequence[int], merges: int,
                          join: Callable, **pieces) -> tuple[list[Merge], Rows]:
    """Broken barriers: the reference round over :func:`laid_end_to_end` (one row).

    >>> rules, (stream,) = fit_across_boundaries([["a"], ["b"]], [1, 1], 1,
    ...                                          lambda l, r, rank: l + r)
    >>> (rules[0].left, rules[0].right), stream
    (('a', 'b'), ['ab'])
    """
    return fit_with([laid_end_to_end(rows, weights)], [1], merges, join, **pieces)


class Variant(NamedTuple):
    """One broken variant: its name, its title in the page, what the chapter says goes wrong,
    and the pieces it changes (the rest are the reference's)."""

    name: str
    title: str
    symptom: str
    pieces: dict
    across_boundaries: bool = False
    #: Equal rows may be trained once, their weights summed and kept where each first appears:
    #: a row's rounds depend only on itself and its weight, and on the order in which pairs are
    #: first seen, which that keeps. Not so when the first match of the whole corpus matters.
    equal_rows_alike: bool = True


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("first-occurrence", "Merge first occurrence only",
            "the rule is applied at its first match only: the corpus keeps unmerged "
            "occurrences that the same rule should have transformed",
            {"replace": replace_first_occurrence}, equal_rows_alike=False),
    Variant("deduplicated", "Deduplicate counts within a word",
            "a pair counts once per word however often it occurs there: repeated "
            "occurrences are undercounted", {"count": count_pairs_deduplicated}),
    Variant("overlapping", "Reuse tokens in overlapping merges",
            "every matching window is merged, so one input token contributes to two "
            "output tokens", {"replace": replace_overlapping}),
    Variant("across-boundaries", "Merge across word boundaries",
            "the words are laid end to end, so pairs are counted and merged that were never "
            "adjacent inside a word", {}, across_boundaries=True, equal_rows_alike=False),
    Variant("arbitrary-ties", "Leave ties unspecified",
            "ties go to the pair seen first, so the same words in another order can learn "
            "other rules", {"choose": choose_first_seen}),
)}


def starting_rows(name: str, rows: Sequence[Sequence], weights: Sequence[int]
                  ) -> tuple[Rows, list[int]]:
    """The rows and weights the variant ``name`` trains on: the rows themselves, or for
    ``across-boundaries`` the one stream of :func:`laid_end_to_end`."""
    if VARIANTS[name].across_boundaries:
        return [laid_end_to_end(rows, weights)], [1]
    return [list(row) for row in rows], list(weights)


def rounds(name: str, rows: Sequence[Sequence], weights: Sequence[int], merges: int,
           join: Callable, *, first_rank: int = 0,
           on_round: Callable | None = None) -> tuple[list[Merge], Rows]:
    """Up to ``merges`` rounds of the variant ``name`` from ``rows`` as they stand (see
    :func:`starting_rows`), ranks from ``first_rank``: from the rows after ``k`` rounds with
    ``first_rank=k``, exactly the rounds a fresh :func:`fit_variant` does after its ``k``-th."""
    return fit_with(rows, weights, merges, join, on_round=on_round, first_rank=first_rank,
                    **VARIANTS[name].pieces)


def fit_variant(name: str, rows: Sequence[Sequence], weights: Sequence[int], merges: int,
                join: Callable, on_round: Callable | None = None) -> tuple[list[Merge], Rows]:
    """The rules and rows of the variant ``name`` (a key of :data:`VARIANTS`).

    >>> fit_variant("first-occurrence", [list("low"), list("lower")], [1, 1], 1,
    ...             lambda l, r, rank: l + r)[1]
    [['lo', 'w'], ['l', 'o', 'w', 'e', 'r']]
    """
    start, start_weights = starting_rows(name, rows, weights)
    return rounds(name, start, start_weights, merges, join, on_round=on_round)
