"""The merge workbench's answers: the page sends a corpus, the library's reference trainer learns.

Every rule, count and token the page shows in the correct mode comes from
:func:`bytepair.learn.naive.fit` (the specification every engine is tested
against); the page only draws. The broken variants come from
:mod:`bytepair.teach.variants` and the learner's own functions from
:mod:`bytepair.teach.exercise`.

Each request carries the corpus and the number of merges done so far; the
page keeps nothing on the server. This module answers a request with the
modules it gathers: :mod:`~bytepair.teach.workbench_corpus` (the corpus in
one of three modes, ``words``, ``counts`` or ``bytes``; the limits and the
refusals), :mod:`~bytepair.teach.workbench_sessions` (a corpus read once, and
where each trainer got to on it, so that a click continues it),
:mod:`~bytepair.teach.workbench_reference` (the reference trainer's view) and
:mod:`~bytepair.teach.workbench_compare` (a broken variant or the learner's
functions beside the reference).

Actions, ``handle(action, payload)``; every payload has ``corpus`` (str),
``mode`` and, in word modes, ``end_of_word`` (bool, default true):

``limits``    the corpus limits (no corpus needed);
``parse``, ``reset``  the rows before any merge and the first pair table;
``pairs``     ``merges``: the state after that many merges and the next table;
``apply``     ``merges``: one merge more (its new tokens marked);
``run``       ``merges``, ``n``: ``n`` merges more;
``variant``   ``merges``, ``variant``: a broken variant beside the reference, the
              divergence marked;
``learner``   ``merges``: the learner's ``count_pairs`` and ``merge`` (``bytepair workbench
              --exercise FILE.py``) beside the reference;
``overlap``   the chapter's ``a a a`` example (no corpus needed).

Bad input raises :class:`WorkbenchError` (a ValueError) with one line for the page.
"""

from __future__ import annotations

import json

from bytepair.learn import naive
from bytepair.teach import variants
from bytepair.teach.workbench_compare import compare_learner, compare_variant
from bytepair.teach.workbench_corpus import (END_OF_WORD, LIMITS, MAX_BYTES, MAX_COUNT,
                                             MAX_MERGES, MAX_ROWS, MODES, Corpus, WorkbenchError,
                                             byte_label, parse)
from bytepair.teach.workbench_reference import MAX_TABLE, Fit, pair_table, reference, state
from bytepair.teach.workbench_sessions import Session, clear_caches, gather, session

# The names the workbench had before its parts moved to modules of their own stay importable here.
__all__ = ["END_OF_WORD", "LIMITS", "MAX_BYTES", "MAX_COUNT", "MAX_MERGES", "MAX_ROWS",
           "MAX_TABLE", "MODES", "Corpus", "Fit", "Session", "WorkbenchError", "byte_label",
           "clear_caches", "compare_learner", "compare_variant", "gather", "handle",
           "overlap_example", "pair_table", "parse", "reference", "rows_of", "session", "state"]


def _shown(value) -> str:
    """A request's value in a refusal: short, whatever its size."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _integer(payload: dict, key: str, default: int, low: int, high: int) -> int:
    value = payload.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WorkbenchError(f"{key} must be a whole number, got {_shown(value)}")
    if not low <= value <= high:
        raise WorkbenchError(f"{key} must be between {low} and {high}, got {value}")
    return value


def rows_of(view: dict) -> list[dict]:
    """A view's rows written out, each with its ``text``, ``count``, ``tokens`` (and ``ids``,
    ``new``): the view sends each distinct row once (``words``) and, per row, which one it is
    (``rows``) and its ``counts``.

    >>> [row["tokens"] for row in rows_of(handle("parse", {"corpus": "ab ab"}))]
    [['a', 'b', '</w>'], ['a', 'b', '</w>']]
    """
    return [dict(view["words"][j], count=count) for j, count in zip(view["rows"], view["counts"])]


def overlap_example() -> dict:
    """The chapter's ``a a a``: two windows of ``a a``, one replacement, ``aa a``; and the broken
    overlapping pass beside it (``aa aa``)."""
    word = ["a", "a", "a"]
    rules, (after,) = naive.fit([word], [1], 1, lambda left, right, rank: left + right)
    broken, matches, reused = variants.overlapping_pass(word, "a", "a", "aa")
    rule = rules[0]
    return {"before": word, "pair": [rule.left, rule.right], "count": rule.count,
            "replacements": rule.replacements, "after": after,
            "overlapping": {"after": broken, "replacements": matches, "reused": reused}}


def handle(action: str, payload, learner=None) -> dict:
    """Answer one request of the page (see the module); bad input raises :class:`WorkbenchError`.

    Answers share lists with the server's caches: serialise them, do not modify them.

    >>> answer = handle("parse", {"corpus": "low lower lowest"})
    >>> answer["winner"]["left"], answer["winner"]["right"], answer["winner"]["count"]
    ('l', 'o', 3)
    >>> answer = handle("apply", {"corpus": "low lower lowest", "merges": 0})
    >>> answer["words"][answer["rows"][0]]["tokens"], answer["words"][0]["new"]
    (['lo', 'w', '</w>'], [0])
    """
    if not isinstance(payload, dict):
        raise WorkbenchError("the request must be a JSON object")
    if action == "limits":
        return dict(LIMITS)
    if action == "overlap":
        return overlap_example()
    if action not in ("parse", "reset", "pairs", "apply", "run", "variant", "learner"):
        raise WorkbenchError(f"the workbench has no action {action!r}")
    read = session(payload)
    if action in ("parse", "reset"):
        return state(read, 0)
    merges = _integer(payload, "merges", 0, 0, MAX_MERGES)
    if action == "pairs":
        return state(read, merges)
    if action == "apply":
        return state(read, min(merges + 1, MAX_MERGES), mark_last=True)
    if action == "run":
        more = _integer(payload, "n", 1, 1, MAX_MERGES)
        if merges + more > MAX_MERGES:
            raise WorkbenchError(f"merges + n must be at most {MAX_MERGES}, got {merges + more}")
        return state(read, merges + more, mark_last=True)
    if action == "variant":
        name = payload.get("variant")
        if not isinstance(name, str) or name not in variants.VARIANTS:
            raise WorkbenchError(f"variant must be one of {', '.join(variants.VARIANTS)}, "
                                 f"got {_shown(name)}")
        return compare_variant(read, merges, name)
    return compare_learner(read, merges, learner)
