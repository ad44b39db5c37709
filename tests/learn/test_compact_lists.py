"""Occurrence lists of one or two positions live in their pair's slot, and the heap is trimmed.

The compiled engine keeps a list of at most two positions inside the pair
slot's word and moves it to a heap block when a third arrives; a merge's
compaction can shrink a heap list back to one or two entries, and a merge
takes a list out of its slot (either form). These tests drive every such
move with `_check()` after each merge (which reads every list in both
forms) and hold the rules and sequences equal to the naive trainer. They
run on both backends: the twin has no such forms, and must agree all the
same.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair.learn import incremental, naive

from helpers import KJV, byte_token

uses_fixtures = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def fit_checked(documents, weights, backend):
    """Rules and sequences, merging one rule at a time with the invariant check after each."""
    trainer = incremental.IncrementalEngine(documents, weights, byte_token, backend=backend)
    trainer._check()
    rules = []
    while (rule := trainer.step()) is not None:
        rules.append(rule)
        trainer._check()
    return rules, trainer.sequences()


# Five symbols in short documents: most pairs are seen once, twice or three
# times, so lists cross the two-entry line both ways; repeats make weights.
@st.composite
def sparse_documents(draw):
    symbols = draw(st.sampled_from([b"abcde", b"ab", "éèê".encode(), b"\x00\x01\xff"]))
    documents = draw(st.lists(st.lists(st.sampled_from(list(symbols)), max_size=9).map(bytes),
                              max_size=12))
    if documents and draw(st.booleans()):
        documents += draw(st.lists(st.sampled_from(documents), max_size=4))
    weights = draw(st.lists(st.integers(1, 3), min_size=len(documents), max_size=len(documents)))
    return documents, weights


@uses_fixtures
@given(data=sparse_documents())
def test_hyp_lists_of_one_and_two_positions_equal_naive(backend, data):
    documents, weights = data
    expected = naive.fit(documents, weights, 10**6, byte_token)
    assert fit_checked(documents, weights, backend) == expected


def test_runs_grow_lists_past_two_and_merge_them_like_naive(backend):
    # `aaaa...` gives one pair whose list grows from its slot to the heap one
    # position at a time; the overlapping matches must resolve left to right.
    documents = [b"a" * n for n in range(9)] + [b"ab" * 4, b"ba", b"aab"]
    weights = [1] * len(documents)
    assert fit_checked(documents, weights, backend) == naive.fit(documents, weights, 10**6,
                                                                  byte_token)


def test_real_text_lists_equal_naive(backend):
    # Real verses: thousands of pairs seen once or twice beside long lists.
    lines = KJV.read_bytes().splitlines()[:60]
    weights = [1 + (i % 3) for i in range(len(lines))]
    trainer = incremental.IncrementalEngine(lines, weights, byte_token, backend=backend)
    rules = trainer.steps(400)
    trainer._check()
    expected, _ = naive.fit(lines, weights, 400, byte_token)
    assert rules == expected
