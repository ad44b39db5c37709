"""Each broken variant differs from the reference exactly where the course's chapter says it does."""

from collections import Counter

from hypothesis import given, settings, strategies as st

from bytepair.learn import naive
from bytepair.learn.rules import count_pairs, replace_pair
from bytepair.teach import variants
from bytepair.teach.workbench import gather
from helpers import examples

# Tiny alphabets: ties and runs like "aaaa" are the common case.
symbols = st.sampled_from("ab")
rows = st.lists(st.lists(symbols, max_size=7), max_size=5)
weighted = rows.flatmap(lambda rs: st.tuples(
    st.just(rs), st.lists(st.integers(1, 3), min_size=len(rs), max_size=len(rs))))


def join(left, right, rank):
    return left + right


@given(weighted, st.integers(0, 8))
def test_the_default_pieces_are_the_reference_trainer(data, merges):
    rs, weights = data
    assert variants.fit_with(rs, weights, merges, join) == naive.fit(rs, weights, merges, join)


def test_the_correct_variant_runs_the_reference_trainer_itself(monkeypatch):
    # No loop of its own: the rounds are naive.fit's, shown round by round as before and after.
    calls = []
    fit = naive.fit
    monkeypatch.setattr(naive, "fit", lambda *a, **k: calls.append(a) or fit(*a, **k))
    rounds = []
    rules, rows = variants.fit_with([list("aaab"), list("ab")], [1, 2], 2, join,
                                    on_round=lambda *seen: rounds.append(seen))
    assert len(calls) == 1
    assert rows == [["aa", "ab"], ["ab"]] and [r.token_id for r in rules] == ["ab", "aa"]
    assert [(before, after) for _, _, before, after in rounds] == [
        ([list("aaab"), list("ab")], [["a", "a", "ab"], ["ab"]]),
        ([["a", "a", "ab"], ["ab"]], [["aa", "ab"], ["ab"]])]
    # A broken piece keeps its own rounds (the reference's loop with that piece).
    calls.clear()
    variants.fit_variant("overlapping", [list("aaa")], [1], 1, join)
    assert calls == []


@given(weighted, st.integers(0, 8))
@settings(max_examples=examples(50))
def test_the_rounds_seen_are_the_same_through_the_reference(data, merges):
    rs, weights = data
    seen = {}
    for name, pieces in (("reference", {}), ("loop", {"count": lambda r, w: count_pairs(r, w)})):
        rounds = []
        out = variants.fit_with(rs, weights, merges, join, on_round=lambda *a: rounds.append(a),
                                **pieces)
        seen[name] = (out, rounds)
    assert seen["reference"] == seen["loop"]


@given(weighted)
def test_deduplicated_undercounts_exactly_the_pairs_repeated_within_a_word(data):
    rs, weights = data
    broken = variants.count_pairs_deduplicated(rs, weights)
    right = count_pairs(rs, weights)
    assert set(broken) == set(right)
    repeated = {pair for row in rs for pair, n in Counter(zip(row, row[1:])).items() if n > 1}
    assert {pair for pair in right if broken[pair] != right[pair]} == repeated
    assert all(broken[pair] < right[pair] for pair in repeated)


@given(weighted, symbols, symbols)
def test_first_occurrence_leaves_exactly_the_later_matches(data, left, right):
    rs, weights = data
    new = left + right
    broken, replaced = variants.replace_first_occurrence(rs, weights, left, right, new)
    correct, _ = variants.replace_everywhere(rs, weights, left, right, new)
    sites = sum(replace_pair(row, left, right, new)[1] for row in rs)
    assert (broken == correct) == (sites <= 1)
    assert sum(row.count(new) for row in broken) == min(sites, 1)
    # What is left unmerged is exactly what the rule should still have transformed.
    assert variants.replace_everywhere(broken, weights, left, right, new)[0] == correct


@given(weighted, symbols, symbols)
def test_overlapping_differs_exactly_on_runs_of_three(data, left, right):
    rs, weights = data
    new = left + right
    for row in rs:
        broken, matches, reused = variants.overlapping_pass(row, left, right, new)
        correct, replaced = replace_pair(row, left, right, new)
        run_of_three = left == right and any(row[i:i + 3] == [left] * 3 for i in range(len(row)))
        assert (broken != correct) == run_of_three == bool(reused)
        # Every window is merged: one token per matching window, not per match.
        assert matches == sum(1 for pair in zip(row, row[1:]) if pair == (left, right))
        # Each reused input token is written twice: the output spells more than the word.
        assert len("".join(broken)) == len(row) + len(reused)


@given(weighted)
def test_across_boundaries_adds_exactly_the_windows_between_words(data):
    rs, weights = data
    stream = variants.laid_end_to_end(rs, weights)
    copies = [row for row, weight in zip(rs, weights) for _ in range(weight) if row]
    between = Counter((a[-1], b[0]) for a, b in zip(copies, copies[1:]))
    assert count_pairs([stream], [1]) == count_pairs(rs, weights) + between


@given(weighted, st.integers(0, 6))
def test_across_boundaries_is_the_reference_on_one_word(data, merges):
    rs, weights = data
    stream = variants.laid_end_to_end(rs, weights)
    assert variants.fit_variant("across-boundaries", rs, weights, merges, join) == \
        naive.fit([stream], [1], merges, join)


@given(weighted)
def test_arbitrary_ties_part_from_the_reference_only_on_a_tie(data):
    rs, weights = data
    counts = count_pairs(rs, weights)
    if not counts:
        return
    broken, n = variants.choose_first_seen(counts)
    correct, m = variants.choose_smallest(counts)
    assert n == m
    tied = sum(1 for c in counts.values() if c == m) > 1
    if not tied:
        assert broken == correct
    # The first pair seen wins: the order of the words decides.
    assert broken == next(pair for pair in counts if counts[pair] == m)


def test_arbitrary_ties_learn_other_rules_from_the_same_words_reordered():
    words = [list("ow"), list("lo")]
    first, _ = variants.fit_variant("arbitrary-ties", words, [1, 1], 1, join)
    second, _ = variants.fit_variant("arbitrary-ties", words[::-1], [1, 1], 1, join)
    assert (first[0].left, first[0].right) == ("o", "w")
    assert (second[0].left, second[0].right) == ("l", "o")
    reference, _ = naive.fit(words, [1, 1], 1, join)
    assert (reference[0].left, reference[0].right) == ("l", "o")


@settings(max_examples=examples(50))
@given(weighted, st.integers(1, 6))
def test_each_variant_is_the_reference_where_its_flaw_cannot_show(data, merges):
    rs, weights = data
    # One-symbol words: no pair, nothing to learn, nothing can go wrong.
    single = [row[:1] for row in rs]
    for name in variants.VARIANTS:
        if name != "across-boundaries":
            assert variants.fit_variant(name, single, weights, merges, join) == \
                naive.fit(single, weights, merges, join)


def test_the_chapters_first_occurrence_example():
    words = [[*w, "</w>"] for w in ("low", "lower", "lowest")]
    rules, rows = variants.fit_variant("first-occurrence", words, [1, 1, 1], 1, join)
    assert (rules[0].left, rules[0].right, rules[0].count, rules[0].replacements) == \
        ("l", "o", 3, 1)
    assert rows == [["lo", "w", "</w>"], [*"lower", "</w>"], [*"lowest", "</w>"]]


@settings(max_examples=examples(60))
@given(weighted, st.integers(0, 6), st.integers(0, 6))
def test_every_variant_continued_from_its_rows_is_a_fresh_run(data, first, more):
    # The workbench continues each variant from the rows it reached: k rounds, then rounds from
    # those rows with ranks from k, must be exactly a fresh run of k + more rounds.
    rs, weights = data
    for name in variants.VARIANTS:
        start, start_weights = variants.starting_rows(name, rs, weights)
        head, rows = variants.rounds(name, start, start_weights, first, join)
        tail, rows = variants.rounds(name, rows, start_weights, more, join,
                                     first_rank=len(head))
        assert head + tail == variants.fit_variant(name, rs, weights, len(head) + more, join)[0]
        assert rows == variants.fit_variant(name, rs, weights, len(head) + more, join)[1]


@settings(max_examples=examples(60))
@given(weighted, st.integers(0, 6))
def test_equal_rows_train_once_where_the_variant_says_so(data, merges):
    rs, weights = data
    rs = rs + rs[:2]  # repeats are the point
    weights = weights + weights[:2]
    distinct, summed, row_of = gather(rs, weights)
    for name, variant in variants.VARIANTS.items():
        if variant.equal_rows_alike:
            rules, rows = variants.fit_variant(name, rs, weights, merges, join)
            gathered_rules, gathered_rows = variants.fit_variant(name, distinct, summed, merges,
                                                                 join)
            assert gathered_rules == rules
            assert [gathered_rows[j] for j in row_of] == rows


def test_first_occurrence_cannot_train_equal_rows_once():
    # Its first match is one row's: two copies of "ab" merge in one only.
    rules, rows = variants.fit_variant("first-occurrence", [["a", "b"]] * 2, [1, 1], 1, join)
    assert rows == [["ab"], ["a", "b"]] and rules[0].replacements == 1
    assert variants.fit_variant("first-occurrence", [["a", "b"]], [2], 1, join)[1] == [["ab"]]
    assert not variants.VARIANTS["first-occurrence"].equal_rows_alike
