"""The compiled ``encode_spans`` (stage 2's piece encoder) against the plain rank-order replay.

``encode_spans`` cuts a piece between two bytes that no token holds side by
side and encodes the parts through a cache; these tests hold it equal to
encoding each piece whole with every rule in rank order.
"""

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bytepair.learn.rules import Merge
from bytepair.learn.superbpe import replay

_encode = pytest.importorskip("bytepair.model._encode")

ALPHABET = b"ab ,\n\xc3\xa9"


@st.composite
def rules(draw):
    """Random rules over a tiny alphabet: each joins two earlier tokens (bytes of the
    alphabet or tokens made before), so ties, runs and joins across spaces are common."""
    symbols, pairs = list(ALPHABET), []
    for _ in range(draw(st.integers(0, 24))):
        pair = (draw(st.sampled_from(symbols)), draw(st.sampled_from(symbols)))
        if pair in pairs:
            continue
        pairs.append(pair)
        symbols.append(255 + len(pairs))
    return [Merge(rank, left, right, 256 + rank, 1, 1) for rank, (left, right) in enumerate(pairs)]


PIECES = st.lists(st.binary(max_size=0) | st.lists(st.sampled_from(ALPHABET), max_size=40).map(bytes),
                  max_size=8)


def spans(pieces: list[bytes]) -> tuple[bytes, array]:
    starts = array("q", [0])
    for piece in pieces:
        starts.append(starts[-1] + len(piece))
    return b"".join(pieces), starts


@given(rules(), PIECES)
def test_encode_spans_equals_replay_of_each_whole_piece(merges, pieces):
    encoder = _encode.Encoder([m.left for m in merges], [m.right for m in merges])
    data, starts = spans(pieces)
    ids, offsets = encoder.encode_spans(data, starts)
    assert len(offsets) == len(pieces) + 1
    got = [list(ids[a:b]) for a, b in zip(offsets, offsets[1:])]
    assert got == [replay(piece, merges) for piece in pieces]


@given(rules(), st.lists(st.sampled_from([b"a b", b"ab,", b" a", b"b\n", b"aaaa"]), max_size=30))
def test_repeated_parts_from_the_cache_equal_replay(merges, parts):
    # The same parts again and again: most are served by the cache the second time.
    encoder = _encode.Encoder([m.left for m in merges], [m.right for m in merges])
    pieces = [b"".join(parts[:k]) for k in range(len(parts) + 1)] * 2
    data, starts = spans(pieces)
    ids, offsets = encoder.encode_spans(data, starts)
    got = [list(ids[a:b]) for a, b in zip(offsets, offsets[1:])]
    assert got == [replay(piece, merges) for piece in pieces]


def test_a_rule_across_a_space_is_never_cut_through():
    # ("a", " ") joins across the space: the piece must not be cut there.
    merges = [Merge(0, 97, 32, 256, 1, 1), Merge(1, 256, 98, 257, 1, 1)]
    encoder = _encode.Encoder([97, 256], [32, 98])
    ids, offsets = encoder.encode_spans(b"a ba b", array("q", [0, 6]))
    assert list(ids) == replay(b"a ba b", merges) == [257, 257]


@given(rules(), PIECES, st.integers(1, 4))
def test_encode_spans_on_threads_equals_one_call(merges, pieces, threads):
    # Stage 2 encodes a run of pieces per thread and joins the parts: the same
    # arrays as one call, for any number of threads (empty pieces included).
    from bytepair.model import spans as threaded
    from bytepair.model.models import ByteModel

    model = ByteModel(merges)
    data, starts = spans(pieces)
    one = model.encode_spans(data, starts)
    saved = threaded.SPANS_PER_THREAD
    threaded.SPANS_PER_THREAD = 1  # a thread even for a few bytes
    try:
        assert threaded.encode_spans(model, data, starts, threads) == one
    finally:
        threaded.SPANS_PER_THREAD = saved
