"""Encoding on threads gives the IDs of encoding one text at a time.

``Tokenizer.encode_batch`` and ``encode_to_array`` hand contiguous ranges of
texts to threads, which read one shared piece cache and learn in caches of
their own that join it after the call; ``bytepair.model.lines``
encodes blocks of lines from their bytes, as ``bytepair encode --per-line``
does on its threads. The texts are drawn from a tiny alphabet so that ties and
runs (``aaaa``) are the common case, with multi-byte UTF-8, special-token text,
empty and repeated texts.
"""

from __future__ import annotations

import re
import threading
from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
import helpers
from bytepair.model import _encode_py, codec
from bytepair.model import parts as parts_module
from bytepair.model.lines import encode_lines, encodes_lines

SPECIALS = ["<|end|>", "<pad>"]
PIECES = ["a", "aa", "aaaa", "ab", "b", " ", "  ", "\n", "\r\n", "\r", "é", "日本", "🙂", "'s", "12",
          *SPECIALS, ""]
TEXTS = st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), max_size=20)


@pytest.fixture(scope="module")
def tok():
    corpus = ["aaaa abab aa ab ba", "é日本 é日本 🙂🙂", "ab\r\nab\n\n  a", "12 12 's 's"] * 3
    return bytepair.train(corpus, merges=40, pretokenize="cl100k", special_tokens=SPECIALS,
                          progress=False)


@given(texts=TEXTS, threads=st.integers(1, 3), allow=st.booleans())
def test_hyp_encode_batch_on_threads_equals_one_by_one(tok, texts, threads, allow):
    special = {"allowed_special": "all"} if allow else {"disallowed_special": ()}
    one_by_one = [tok.encode(text, **special) for text in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)  # threads even on tiny batches
        assert tok.encode_batch(texts, threads=threads, **special) == one_by_one
        flat = tok.encode_to_array(texts, threads=threads, append=0, **special)
    assert flat.tolist() == [i for ids in one_by_one for i in [*ids, 0]]


@pytest.mark.skipif(not encodes_lines(bytepair.train(["a"], merges=0, progress=False).model),
                    reason="the compiled encoder is not in use (BYTEPAIR_NO_EXTENSIONS)")
@given(texts=TEXTS, keep=st.booleans(), itemsize=st.sampled_from([2, 4]))
def test_hyp_lines_from_bytes_equal_one_by_one(tok, texts, keep, itemsize):
    data = "".join(texts).encode("utf-8")
    lines = re.findall(r"[^\n]*\n|[^\n]+", "".join(texts))  # cut after each \n only
    if not keep:
        lines = [re.sub(r"\r?\n\Z", "", line) for line in lines]
    done = encode_lines(tok.model, data, itemsize, append=1, skip=tuple(SPECIALS), keep_ends=keep)
    if any(special in line for line in lines for special in SPECIALS):
        assert done is None  # left to the caller, who reads them as text
        return
    raw, count, characters = done
    ids = array("H" if itemsize == 2 else "I")
    ids.frombytes(raw)
    assert ids.tolist() == [i for line in lines for i in [*tok.encode_ordinary(line), 1]]
    assert (count, characters) == (len(lines), sum(map(len, lines)))


def test_lines_that_are_not_utf8_are_left_to_the_caller(tok):
    if not codec.compiled():
        pytest.skip("the compiled encoder is not in use")
    assert encode_lines(tok.model, b"fine\nbad \xff\n", 4) is None
    assert encode_lines(tok.model, b"", 4) == (b"", 0, 0)
    assert encode_lines(bytepair.train_bytes(["aa"], 1), b"aa\n", 4) is None  # no pattern


@pytest.mark.skipif(not codec.compiled(), reason="the compiled encoder is not in use")
@given(texts=TEXTS, cuts=st.lists(st.integers(0, 20), max_size=6), lists=st.booleans(),
       threads=st.integers(1, 3))
def test_hyp_parts_on_threads_equal_each_range_encoded_alone(tok, texts, cuts, lists, threads):
    # Threads share out the parts; each part must hold exactly what one batch of its range
    # gives: the lists and the texts left out (special-token text), or the array (None
    # when a text in it is left out).
    bounds = sorted({0, len(texts), *(cut for cut in cuts if cut <= len(texts))})
    skip = tuple(SPECIALS)
    with parts_module.encoding(tok.model, texts, bounds, threads, skip=skip, lists=lists,
                               append=1, itemsize=2) as job:
        assert len(job) == len(bounds) - 1
        for part, (start, stop) in enumerate(zip(bounds, bounds[1:])):
            if lists:
                batch = tok.model.encode_batch_ids(texts, skip=skip, start=start, stop=stop)
                assert job.lists(part) == (batch.lists(track=False), batch.skipped())
            else:
                assert job.array_bytes(part, 2) == tok.model.encode_batch_array(
                    texts, 2, 1, skip=skip, start=start, stop=stop, accept_bytes=False)


@given(st.lists(st.one_of(st.text(max_size=30), st.binary(max_size=30), st.integers(),
                          st.none()), max_size=40))
def test_hyp_text_ends_are_running_sums_of_lengths(items):
    want = array("q")
    total = 0
    for item in items:
        total += len(item) if isinstance(item, (str, bytes)) else 0
        want.append(total)
    assert codec.text_ends(items) == want
    assert _encode_py.text_ends(items) == want


def test_a_thread_takes_back_the_cache_it_gave():
    pool = codec.CachePool()
    mine, first, last = pool.take(), pool.take(), pool.take()
    assert len({id(mine), id(first), id(last)}) == 3  # three encodes at once: three caches

    def give_from_another_thread(cache):
        worker = threading.Thread(target=pool.give, args=(cache,))
        worker.start()
        worker.join()

    give_from_another_thread(first)
    pool.give(mine)
    give_from_another_thread(last)
    assert pool.take() is mine  # neither the first given nor the last: this thread's own
    assert {id(pool.take()), id(pool.take())} == {id(first), id(last)}  # then free ones
    assert len(pool) == 0
    for cache in (mine, first, last):
        pool.give(cache)
    assert len(pool) == 3  # never more caches than encodes that ran at once


@pytest.mark.skipif(not codec.compiled(), reason="the compiled encoder is not in use")
def test_a_batch_whose_threads_cannot_get_a_cache_raises_and_gives_the_shared_one_back(
        tok, monkeypatch):
    made = []

    def no_room(shared):
        if made:
            raise MemoryError("no room for a piece cache")
        made.append(shared)
        return real_learner(shared)

    real_learner = codec.learner_of
    monkeypatch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
    monkeypatch.setattr(codec, "learner_of", no_room)
    tok.encode_to_array(["warm"], threads=1)  # the model's one cache exists and is free
    free = len(tok.model._caches)
    raised = []

    def encode():
        try:
            tok.encode_to_array(["aa ab"] * 50, threads=2)
        except MemoryError as exc:
            raised.append(exc)

    worker = threading.Thread(target=encode, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the batch hung"
    assert raised and "no room" in str(raised[0])
    assert len(tok.model._caches) == free  # the shared cache went back to the pool


TIES = st.lists(st.lists(st.sampled_from([*PIECES, "aaaaaaaa", "abababab", "été été", "日本日本日本"]),
                         max_size=16).map("".join), max_size=24)


@pytest.mark.skipif(not codec.compiled(), reason="the compiled encoder is not in use")
@given(texts=TIES, threads=st.integers(2, 4), again=st.booleans())
def test_hyp_batches_on_threads_equal_the_naive_encoder_call_after_call(tok, texts, threads, again):
    # Threads read the shared piece cache that earlier calls filled and learn in caches of
    # their own that join it after the call: a second call reads what both threads learned.
    # The smallest budget makes the caches fill, stop taking pieces and start afresh.
    want = [helpers.reference_encode(tok, text, SPECIALS) for text in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
        patch.setattr(tok.model, "_caches", codec.CachePool(SMALLEST_CACHE))
        for _ in range(2 if again else 1):
            assert tok.encode_batch(texts, threads=threads, allowed_special="all") == want
            flat = tok.encode_to_array(texts, threads=threads, allowed_special="all")
            assert flat.tolist() == [i for ids in want for i in ids]
            assert tok.encode_batch(texts, threads=1, allowed_special="all") == want


SMALLEST_CACHE = 73_728  # the piece cache's smallest budget: its first tables


@pytest.mark.skipif(not codec.compiled(), reason="the compiled encoder is not in use")
def test_threads_of_a_batch_share_one_cache_that_stays_within_its_budget(tok, monkeypatch):
    def words(first: int, count: int) -> list[str]:  # distinct words of letters, 50 a text
        word = ["".join("abcdefghijklmnopqrstuvwxyz"[(n // 26 ** k) % 26] for k in range(4))
                for n in range(first, first + count)]
        return [" " + " ".join(word[k:k + 50]) for k in range(0, count, 50)]

    monkeypatch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
    texts = words(0, 1000)
    alone = codec.CachePool(SMALLEST_CACHE * 2)
    monkeypatch.setattr(tok.model, "_caches", alone)
    tok.encode_batch(texts, threads=1)
    pool = codec.CachePool(SMALLEST_CACHE * 2)
    monkeypatch.setattr(tok.model, "_caches", pool)
    tok.encode_batch(texts, threads=2)
    assert len(pool) == 1  # one cache for the batch, not one per thread
    cache = pool.take()
    pool.give(cache)
    assert len(cache) == len(alone.take()) > 500  # what both threads learned joined it
    misses = cache.stats["misses"]
    tok.encode_to_array(texts, threads=2)
    assert cache.stats["misses"] == misses  # a later call reads what either thread learned
    for call in range(1, 61):  # 60,000 distinct words: many times what the budget holds
        batch = words(1000 * call, 1000)
        tok.encode_to_array(batch, threads=2) if call % 2 else tok.encode_batch(batch, threads=2)
        assert len(pool) == 1 and pool.take() is cache
        pool.give(cache)
        assert cache.nbytes <= cache.budget == SMALLEST_CACHE * 2
    assert cache.stats["resets"] >= 1 and cache.stats["misses"] > 30_000


@pytest.mark.skipif(not codec.compiled(), reason="the compiled encoder is not in use")
def test_a_lent_cache_is_read_first_and_takes_what_its_learner_merged():
    model = bytepair.train(["ab ab abc abc abcd"], merges=4, pretokenize="gpt2", progress=False).model
    code = model._pattern_code
    shared = codec.backend.PieceCache()
    model._codec.encode(" abcd abc", code, shared)
    learner = codec.learner_of(shared)
    with pytest.raises(ValueError, match="learner"):
        shared.lend(learner)  # already lent
    with pytest.raises(ValueError, match="learner"):
        learner.absorb(shared)
    assert model._codec.encode(" abcd abc ba", code, learner) == model.encode(" abcd abc ba")
    assert learner.stats["misses"] == len(learner) == 1  # " ba": not in the shared cache
    before = len(shared)
    shared.absorb(learner)
    assert len(shared) == before + 1 and len(learner) == 0
    assert model._codec.encode(" ba", code, shared) == model.encode(" ba")
    assert shared.stats["misses"] == before + 1
    shared.lend(learner)  # once taken back, it can be lent again
    shared.absorb(learner)
