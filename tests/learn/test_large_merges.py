"""Large merges record their new windows in a second pass; the rules stay exact.

The compiled engine gathers a merge's new windows in scratch lists, except
for merges of ``recount_windows_from`` occurrences or more, which count the
windows while replacing and record them afterwards, into lists allocated at
their size. Training sets the switch high; here it is set low enough that
every merge, or only some, take the second pass, on inputs full of ties,
runs (``aaaa``, ``abab``: a replacement's right-hand window is the next one's
left), multi-byte UTF-8, empty and duplicate documents.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair.learn import incremental, naive
from helpers import byte_token

letters = st.sampled_from(["a", "b", "ab", "é", "日", " "])
documents = st.lists(st.lists(letters, max_size=16).map(lambda parts: "".join(parts).encode()),
                     max_size=8)


def compiled_trainer(docs, weights, recount_windows_from):
    if incremental.BACKENDS["compiled"] is None:
        pytest.skip("the compiled extensions are not built")
    trainer = incremental.IncrementalTrainer(docs, weights, byte_token, backend="compiled")
    trainer._engine.recount_windows_from = recount_windows_from
    return trainer


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=150)
@given(documents, st.integers(0, 24), st.sampled_from([0, 1, 2, 3, 5, 1 << 30]),
       st.lists(st.integers(0, 6), max_size=6))
def test_rules_equal_naive_whichever_merges_take_the_second_pass(docs, merges, switch, floors):
    docs = docs + docs[:2]  # duplicates
    weights = [1 + i % 3 for i in range(len(docs))]
    want, want_sequences = naive.fit(docs, weights, merges, byte_token)
    trainer = compiled_trainer(docs, weights, switch)
    got = []
    for k in range(merges):
        rules = trainer.steps(1)
        trainer._check()  # every live window is in its pair's list, counts are exact
        if not rules:
            break
        got += rules
        if floors:
            trainer.keep_pairs_from(floors[k % len(floors)])
    assert got == want
    if len(got) == len(want) == merges:
        assert trainer.sequences() == want_sequences


@pytest.mark.parametrize("text", [b"abababab", b"aaaaaaa", b"abab ab abab", b"aabaab"])
def test_runs_give_the_same_lists_both_ways(text):
    docs = [text, text[1:], b"", text]
    weights = [2, 1, 5, 1]
    both = []
    for switch in (0, 1 << 30):
        trainer = compiled_trainer(docs, weights, switch)
        rules = []
        while (step := trainer.steps(1)):
            rules += step
            counts, _ = trainer._engine.check()
        both.append((rules, counts, trainer.sequences()))
    assert both[0] == both[1]
    assert both[0][0] == naive.fit(docs, weights, len(both[0][0]), byte_token)[0]
