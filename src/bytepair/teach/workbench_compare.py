"""Beside the reference: a broken variant or the learner's functions, where they diverge marked.

The broken variants come from :mod:`bytepair.teach.variants` and the
learner's functions from :mod:`bytepair.teach.exercise`; each continues from
the rows it last reached on the same corpus, as the reference does.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from bytepair.learn.rules import Merge, count_pairs, priority
from bytepair.teach import variants
from bytepair.teach.workbench_corpus import MAX_ROWS, Corpus, WorkbenchError
from bytepair.teach.workbench_reference import pair_table, reference, rule_entry, state
from bytepair.teach.workbench_sessions import Session, gather, progress


def _expanded(corpus: Corpus) -> tuple[list, list[int]]:
    """Each row written out ``count`` times, and which row each copy is of (a limit applies)."""
    total = sum(corpus.weights)
    if total > MAX_ROWS:
        raise WorkbenchError(f"this needs every word written out count times: {total:,} words, "
                             f"more than the workbench's limit of {MAX_ROWS:,}")
    rows, of = [], []
    for i, (row, weight) in enumerate(zip(corpus.rows, corpus.weights)):
        for _ in range(weight):
            rows.append(row)
            of.append(i)
    return rows, of


def _split_stream(stream: list, lengths: list[int], width: Callable) -> list[tuple[list, list]]:
    """A stream laid back out as rows of ``lengths`` first symbols: per row its tokens and the
    indexes of the tokens that run past its end (they start in it)."""
    rows: list[tuple[list, list]] = [([], []) for _ in lengths]
    ends, total = [], 0
    for n in lengths:
        total += n
        ends.append(total)
    r, offset = 0, 0
    for token in stream:
        while r < len(lengths) - 1 and offset >= ends[r]:
            r += 1
        tokens, crossing = rows[r]
        offset += width(token)
        if offset > ends[r]:
            crossing.append(len(tokens))
        tokens.append(token)
    return rows


def _variant_fit(name: str, key, rows: list, weights: list[int], merges: int, join: Callable,
                 keep_before: bool = False) -> tuple[list[Merge], list, list | None]:
    """The variant ``name`` on ``rows`` (as :func:`bytepair.teach.variants.starting_rows` gives
    them), continued from where it got to under ``key``."""
    def run(start, first_rank, n, on_round):
        return variants.rounds(name, start, weights, n, join, first_rank=first_rank,
                               on_round=lambda counts, rule, before, after:
                               on_round(rule, before, after))

    return progress.fit(key, rows, merges, run, keep_before=keep_before)


def compare_variant(session: Session, merges: int, name: str) -> dict:
    """The variant ``name`` beside the reference after ``merges`` merges, where they diverge marked.

    ``broken.rows[i]`` lines up with the reference's row ``broken.rows[i].of``;
    each has ``differs`` and ``marks`` (token indexes: ``missed`` for the
    occurrences of learned rules that stayed unmerged, ``reused`` for tokens
    made from an input token already used, ``crossing`` for tokens that run
    across a word boundary). ``broken.history[k].differs`` says where the
    rules part; ``diverged_at`` is the first such rank. Variants whose equal
    rows stay alike train each distinct row once.
    """
    if name not in variants.VARIANTS:
        raise WorkbenchError(f"variant must be one of {', '.join(variants.VARIANTS)}, "
                             f"got {name!r}")
    corpus = session.corpus
    variant = variants.VARIANTS[name]
    ref = state(session, merges)
    ref_fit = reference(session, merges)
    ref_rows = [ref_fit.rows[j] for j in session.row_of]
    ids = corpus.mode == "bytes"
    train = _train_across_boundaries if variant.across_boundaries else _train_within_rows
    broken = train(session, name, variant, merges)
    rules, of = broken.rules, broken.of
    label = corpus.labeller(rules)
    out_rows = [_shown_row(corpus, of[i], 1 if variant.across_boundaries else corpus.weights[i],
                           tokens, label, tokens != ref_rows[of[i]],
                           {key: value for key, value in marks.items() if value})
                for i, (tokens, marks) in enumerate(broken.rows)]
    history, diverged = _history(rules, ref_fit.rules, label, corpus.labeller(ref_fit.rules), ids)
    table, pairs = _broken_table(variant, broken, label, ids)
    out = {
        "variant": {"name": name, "title": variant.title, "symptom": variant.symptom},
        "reference": ref,
        "broken": {"rows": out_rows, "history": history, "table": table, "pairs": pairs,
                   "merges": len(rules)},
        "diverged_at": diverged,
    }
    if name == "arbitrary-ties":
        out["reordered"] = _reordered(session, name, merges, rules, ids)
    out["summary"] = _summary(name, out, rules, ref_fit.rules)
    return out


class _Broken(NamedTuple):
    """A variant's run, its rows lined up with the corpus's for the page."""

    rules: list[Merge]
    rows: list            # (tokens, marks) per row shown
    of: list[int]         # the corpus row each row shown is (a copy of)
    counted: list         # the rows the variant's pair table counts, with their weights
    weights: list[int]


def _train_across_boundaries(session: Session, name: str, variant: variants.Variant,
                             merges: int) -> _Broken:
    """The variant on the corpus as one stream (each row written out ``count`` times), laid
    back out as rows with the tokens that cross a row's end marked."""
    corpus = session.corpus
    rows, of = _expanded(corpus)
    start, weights = variants.starting_rows(name, rows, [1] * len(rows))
    rules, (stream,), _ = _variant_fit(name, ("variant", name, session.key), start, weights,
                                       merges, corpus.join)
    laid = _split_stream(stream, [len(row) for row in rows], corpus.width(rules))
    return _Broken(rules, [(tokens, {"crossing": crossing}) for tokens, crossing in laid], of,
                   [stream], [1])


def _train_within_rows(session: Session, name: str, variant: variants.Variant,
                       merges: int) -> _Broken:
    """The variant row by row, with the learned pairs it left unmerged (``missed``) or the
    tokens its last pass reused (``reused``) marked."""
    corpus = session.corpus
    of = list(range(len(corpus.rows)))
    if variant.equal_rows_alike:
        start, weights, gathered = session.distinct, session.weights, session.row_of
    else:
        start, weights, gathered = corpus.rows, corpus.weights, of
    rules, trained, before = _variant_fit(name, ("variant", name, session.key), start, weights,
                                          merges, corpus.join, keep_before=name == "overlapping")
    marks_of: list[dict] = [{} for _ in trained]
    if name == "first-occurrence":
        learned = {(r.left, r.right) for r in rules}
        for tokens, marks in zip(trained, marks_of):
            marks["missed"] = _occurrences(tokens, learned)
    if rules and before is not None and name == "overlapping":
        rule = rules[-1]
        for marks, row in zip(marks_of, before):
            marks["reused"] = variants.overlapping_pass(row, rule.left, rule.right,
                                                        rule.token_id)[2]
    return _Broken(rules, [(trained[j], marks_of[j]) for j in gathered], of, trained, weights)


def _shown_row(corpus: Corpus, of: int, count: int, tokens: list, label: Callable,
               differs: bool, marks: dict) -> dict:
    """A trained row as the page shows it beside the reference's row ``of``."""
    entry = {"of": of, "text": corpus.texts[of], "count": count,
             "tokens": [label(t) for t in tokens], "differs": differs, "marks": marks}
    if corpus.mode == "bytes":
        entry["ids"] = list(tokens)
    return entry


def _broken_table(variant: variants.Variant, broken: _Broken, label: Callable,
                  ids: bool) -> tuple[list[dict], int]:
    """The variant's pair table, each pair with what the reference counts in the same rows
    (``expected``) and whether the variant picks it (``winner``)."""
    broken_counts = variant.pieces.get("count", count_pairs)(broken.counted, broken.weights)
    if variant.across_boundaries:  # inside the words: the stream's tokens by the word they start in
        true_counts = count_pairs([tokens for tokens, _ in broken.rows], [1] * len(broken.rows))
    elif "count" in variant.pieces:
        true_counts = count_pairs(broken.counted, broken.weights)
    else:  # the variant counts as the reference does
        true_counts = broken_counts
    choose = variant.pieces.get("choose", variants.choose_smallest)
    table, pairs = pair_table(broken_counts, label, ids)
    if broken_counts:
        winner = choose(broken_counts)[0]
        for row, (pair, _) in zip(table, sorted(broken_counts.items(),
                                                key=lambda item: priority(item[1], *item[0]))):
            row["winner"] = pair == winner
            row["expected"] = true_counts.get(pair, 0)
    return table, pairs


def _reordered(session: Session, name: str, merges: int, rules: list[Merge],
               ids: bool) -> list[dict]:
    """The variant's rules on the same words in the other order (another insertion order,
    other ties), each marked where it differs from ``rules``."""
    corpus = session.corpus
    distinct, weights, _ = gather(corpus.rows[::-1], corpus.weights[::-1])
    reordered, _, _ = _variant_fit(name, ("reordered", name, session.key), distinct,
                                   weights, merges, corpus.join)
    other_label = corpus.labeller(reordered)
    return [dict(rule_entry(rule, other_label, ids),
                 differs=k >= len(rules) or rule[:3] != rules[k][:3])
            for k, rule in enumerate(reordered)]


def _history(rules: list[Merge], ref_rules: list[Merge], label: Callable, ref_label: Callable,
             ids: bool) -> tuple[list[dict], int | None]:
    """The rules rank by rank beside the reference's, and the first rank where they part."""
    history, diverged = [], None
    for k, rule in enumerate(rules):
        entry = rule_entry(rule, label, ids)
        same = k < len(ref_rules) and ref_rules[k] == rule
        entry["differs"] = not same
        if not same and k < len(ref_rules):
            entry["expected"] = rule_entry(ref_rules[k], ref_label, ids)
        if not same and diverged is None:
            diverged = k
        history.append(entry)
    if diverged is None and len(rules) != len(ref_rules):
        diverged = min(len(rules), len(ref_rules))
    return history, diverged


def _occurrences(row: list, pairs: set) -> list[int]:
    """Indexes of both tokens of every non-overlapping match of a learned pair left in ``row``."""
    found, i = [], 0
    while i + 1 < len(row):
        if (row[i], row[i + 1]) in pairs:
            found += [i, i + 1]
            i += 2
        else:
            i += 1
    return found


def _summary(name: str, out: dict, rules: list[Merge], ref_rules: list[Merge]) -> str:
    rows = out["broken"]["rows"]
    k = out["diverged_at"]
    where = (f"the rules part at rank {k}" if k is not None
             else "the rules are the reference's so far")
    if name == "first-occurrence":
        missed = sum(len(r["marks"].get("missed", ())) // 2 for r in rows)
        return (f"{missed} occurrence{'s' if missed != 1 else ''} of learned rules left unmerged; "
                f"{where}")
    if name == "overlapping":
        reused = sum(len(r["marks"].get("reused", ())) for r in rows)
        return f"{reused} token{'s' if reused != 1 else ''} made from a reused input token; {where}"
    if name == "across-boundaries":
        crossing = sum(len(r["marks"].get("crossing", ())) for r in rows)
        return f"{crossing} token{'s' if crossing != 1 else ''} across a word boundary; {where}"
    if name == "deduplicated":
        under = sum(1 for row in out["broken"]["table"] if row["count"] != row["expected"])
        return f"{under} pair{'s' if under != 1 else ''} undercounted in the table; {where}"
    reordered = out.get("reordered", [])
    changed = sum(1 for rule in reordered if rule["differs"])
    return (f"{where}; the same words in reverse order learn {changed} "
            f"rule{'s' if changed != 1 else ''} differently")


def compare_learner(session: Session, merges: int, learner) -> dict:
    """The learner's ``count_pairs`` and ``merge`` beside the reference (each word written out),
    continued from where they got to on this corpus."""
    if learner is None:
        raise WorkbenchError("no exercise file was given: start the workbench with "
                             "bytepair workbench --exercise FILE.py")
    from bytepair.teach.exercise_learner import LearnerError, learner_fit

    corpus = session.corpus
    rows, of = _expanded(corpus)
    restart = getattr(learner, "restart", None)
    if restart is not None:
        restart()  # a call stopped in an earlier request stopped that request only

    def run(start, first_rank, n, on_round):
        return learner_fit(learner, start, n, corpus.join, first_rank=first_rank,
                           on_round=on_round, where=f"on a {corpus.mode} corpus")

    try:
        rules, learned_rows, _ = progress.fit(("learner", learner, session.key),
                                               [list(row) for row in rows], merges, run)
    except LearnerError as exc:
        raise WorkbenchError(f"{learner.name}: {exc}") from None
    ref_fit = reference(session, merges)
    ids = corpus.mode == "bytes"
    label = corpus.labeller(rules)
    ref_label = corpus.labeller(ref_fit.rules)
    out_rows = [_shown_row(corpus, of[i], 1, row, label,
                           list(row) != ref_fit.rows[session.row_of[of[i]]], {})
                for i, row in enumerate(learned_rows)]
    history, diverged = _history(rules, ref_fit.rules, label, ref_label, ids)
    return {"learner": learner.name, "reference": state(session, merges),
            "broken": {"rows": out_rows, "history": history, "merges": len(rules)},
            "diverged_at": diverged,
            "summary": ("your functions learn the reference's rules" if diverged is None
                        else f"your functions part from the reference at rank {diverged}")}

