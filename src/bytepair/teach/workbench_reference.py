"""The reference trainer as the page shows it: its rules, its rows and the next pair table.

The rows are the session's distinct rows, trained by :func:`bytepair.learn.naive.fit`
(the specification every engine is tested against) and continued from where
the reference got to on the corpus.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, NamedTuple

from bytepair.learn import naive
from bytepair.learn.rules import Merge, count_pairs, priority
from bytepair.teach.workbench_corpus import LIMITS
from bytepair.teach.workbench_sessions import Session, progress

#: The most pairs a table sends (the rest are summed up in one line).
MAX_TABLE = 300


class Fit(NamedTuple):
    rules: list[Merge]
    rows: list            # one per distinct row of the session


def reference(session: Session, merges: int) -> Fit:
    """The reference trainer's rules and distinct rows after ``merges`` merges (fewer if no
    pair is left), continued from where it got to on this corpus (see
    :class:`~bytepair.teach.workbench_sessions.Progress`)."""
    corpus = session.corpus

    def run(rows, first_rank, n, on_round):
        return naive.fit(rows, session.weights, n, corpus.join, first_rank=first_rank,
                         on_round=lambda counts, rule, after: on_round(rule, None, after))

    rules, rows, _ = progress.fit(("reference", session.key), session.distinct, merges, run)
    return Fit(rules, rows)


def pair_table(counts: Counter, label: Callable, ids: bool) -> tuple[list[dict], int]:
    """The candidates in the documented order (count descending, then ``(left, right)``).

    Each row: ``left``, ``right`` (display text), ``count``, ``tied`` (another
    row has the same count), ``winner`` (the first row); with ``ids``, the
    token IDs too. Returns the first :data:`MAX_TABLE` rows and how many there are.
    """
    ordered = sorted(counts.items(), key=lambda item: priority(item[1], *item[0]))
    sizes = Counter(counts.values())
    table = []
    for i, ((left, right), count) in enumerate(ordered[:MAX_TABLE]):
        row = {"left": label(left), "right": label(right), "count": count,
               "tied": sizes[count] > 1, "winner": i == 0}
        if ids:
            row["ids"] = [left, right]
        table.append(row)
    return table, len(ordered)


def rule_entry(rule: Merge, label: Callable, ids: bool) -> dict:
    """A rule as the page shows it: its rank, pair, token and counts (with ``ids``, the IDs)."""
    out = {"rank": rule.rank, "left": label(rule.left), "right": label(rule.right),
           "token": label(rule.token_id), "count": rule.count,
           "replacements": rule.replacements}
    if ids:
        out["ids"] = [rule.left, rule.right, rule.token_id]
    return out


def _words(session: Session, rows: list, label: Callable, new=None) -> list[dict]:
    """Each distinct row's text and tokens (with ``new``: where the last merge's token is)."""
    ids = session.corpus.mode == "bytes"
    out = []
    for text, row in zip(session.texts, rows):
        # Word tokens are their own text: the row is sent as it is (it is not modified).
        entry = {"text": text, "tokens": [label(token) for token in row] if ids else row}
        if ids:
            entry["ids"] = row
        if new is not None:
            entry["new"] = [k for k, token in enumerate(row) if token == new] if new in row else []
        out.append(entry)
    return out


def state(session: Session, merges: int, mark_last: bool = False) -> dict:
    """The page's whole view after ``merges`` merges of the reference trainer.

    The rows are sent compactly: ``words`` has each distinct row once (its
    ``text``, ``tokens``, in byte mode ``ids``, with ``mark_last`` the indexes
    ``new`` of the last merge's token), ``rows[i]`` is the word of row ``i``
    and ``counts[i]`` its count (see :func:`bytepair.teach.workbench.rows_of`).
    """
    corpus = session.corpus
    fit = reference(session, merges)
    label = corpus.labeller(fit.rules)
    ids = corpus.mode == "bytes"
    counts = count_pairs(fit.rows, session.weights)
    table, pairs = pair_table(counts, label, ids)
    last = fit.rules[-1] if fit.rules and mark_last else None
    return {
        "mode": corpus.mode, "end_of_word": corpus.end_of_word,
        "merges": len(fit.rules), "requested": merges, "done": not counts,
        "words": _words(session, fit.rows, label, last.token_id if last else None),
        "rows": session.row_of, "counts": corpus.weights,
        "history": [rule_entry(rule, label, ids) for rule in fit.rules],
        "table": table, "pairs": pairs, "winner": table[0] if table else None,
        "last": rule_entry(last, label, ids) if last else None,
        "stats": {"rows": len(corpus.rows), "occurrences": sum(session.weights),
                  "symbols": session.symbols,
                  "tokens": sum(len(row) * w for row, w in zip(fit.rows, session.weights))},
        "limits": LIMITS,
    }

