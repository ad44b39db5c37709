"""The compiled encoder equals rank-order replay and the pure-Python encoder.

Models here are trained on tiny alphabets (rules apply often, runs like
``aaaa`` overlap) or drawn at random (any valid rule table, chains
included). Inputs longer than 64 bytes take the heap path, shorter ones the
scanning path, so both are compared with the definition.
"""

from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
import helpers
from bytepair.model import _encode_py
from bytepair.model import codec
from bytepair.model import parts as parts_module
from bytepair.model import tokenizer as tokenizer_module
from bytepair.split.pretokenize import PATTERNS, splitter
from bytepair.teach.demo import demo_documents
from bytepair.learn.rules import Merge, replace_pair

pytestmark = pytest.mark.skipif(
    not codec.compiled(), reason="the compiled encoder is not in use (BYTEPAIR_NO_EXTENSIONS)")
#: The compiled encoder module (the Python twin's API is the same).
compiled = codec.backend

ALPHABETS = [b"a", b"ab", b"a b", "é日".encode(), b"\x00\xff"]


def replay(lefts, rights, data: bytes) -> list[int]:
    """Encoding by definition: every rule, in rank order, one left-to-right pass each."""
    tokens = list(data)
    for rank, (left, right) in enumerate(zip(lefts, rights)):
        tokens, _ = replace_pair(tokens, left, right, 256 + rank)
    return tokens


def definition_bytes(lefts, rights, token: int) -> bytes:
    if token < 256:
        return bytes([token])
    return (definition_bytes(lefts, rights, lefts[token - 256])
            + definition_bytes(lefts, rights, rights[token - 256]))


@st.composite
def rule_tables(draw):
    """Any valid rule table over a tiny alphabet: each rule joins two earlier tokens."""
    alphabet = draw(st.sampled_from(ALPHABETS))
    lefts, rights = helpers.random_rules(draw, alphabet, 0, 25)
    return lefts, rights, alphabet


@st.composite
def inputs_over(draw, alphabet: bytes):
    """Bytes over ``alphabet``: short, long (heap path), or long runs of one byte."""
    letters = st.sampled_from(alphabet)
    kind = draw(st.sampled_from(["short", "long", "run"]))
    if kind == "run":
        return bytes([draw(letters)]) * draw(st.integers(0, 400))
    size = 64 if kind == "short" else 400
    return bytes(draw(st.lists(letters, max_size=size)))


@given(rule_tables(), st.data())
def test_hyp_compiled_equals_rank_order_replay(table, data):
    lefts, rights, alphabet = table
    text = data.draw(st.one_of(inputs_over(alphabet), st.binary(max_size=200)))
    encoder = compiled.Encoder(lefts, rights)
    expected = replay(lefts, rights, text)
    assert encoder.encode(text) == expected
    assert _encode_py.Encoder(lefts, rights).encode(text) == expected
    assert encoder.decode(expected) == text


@given(rule_tables(), st.data())
def test_hyp_cached_pieces_equal_uncached(table, data):
    lefts, rights, alphabet = table
    pieces = data.draw(st.lists(inputs_over(alphabet), max_size=30))
    encoder = compiled.Encoder(lefts, rights)
    cache = compiled.PieceCache()
    expected = [i for piece in pieces for i in replay(lefts, rights, piece)]
    assert encoder.encode_pieces(pieces, cache) == expected
    assert encoder.encode_pieces(pieces, cache) == expected  # now from the cache


@st.composite
def long_token_tables(draw):
    """Rule tables over ``a b`` (UTF-8, so they can be split) whose rules mostly join
    recent tokens: many tokens of more than 8 bytes, several with the same first 8."""
    tokens = [ord("a"), ord("b"), ord(" ")]
    lefts, rights, seen = [], [], set()
    for _ in range(draw(st.integers(0, 40))):
        side = st.sampled_from(tokens[-4:]) | st.sampled_from(tokens)
        pair = (draw(side), draw(side))
        if pair not in seen:
            seen.add(pair)
            lefts.append(pair[0])
            rights.append(pair[1])
            tokens.append(255 + len(lefts))
    return lefts, rights


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
@given(table=long_token_tables(), data=st.data())
def test_hyp_split_pieces_equal_replay_of_each_piece(pattern, table, data):
    # Split text: most pieces are looked up as whole tokens, a block at a time, and
    # the last piece's bytes end the buffer (read with no bytes after it).
    lefts, rights = table
    encoder = compiled.Encoder(lefts, rights)
    words = [definition_bytes(lefts, rights, t) for t in range(256, 256 + len(lefts))]
    text = data.draw(st.lists(st.sampled_from(words) if words else st.just(b"a")
                              | inputs_over(b"a b"), max_size=80).map(b"".join))
    split = splitter(PATTERNS[pattern])
    expected = [i for piece in split(text.decode()) for i in replay(lefts, rights, piece.encode())]
    cache = compiled.PieceCache()
    for _ in range(2):  # the second time through the piece cache
        assert encoder.encode(text, compiled.PATTERN_CODES[pattern], cache) == expected
    assert encoder.encode(text, compiled.PATTERN_CODES[pattern]) == expected


@given(rule_tables())
def test_hyp_token_bytes_follow_the_rules(table):
    lefts, rights, _ = table
    encoder = compiled.Encoder(lefts, rights)
    python = _encode_py.Encoder(lefts, rights)
    for token in range(256 + len(lefts)):
        data = definition_bytes(lefts, rights, token)
        assert encoder.token_bytes(token) == python.token_bytes(token) == data
        assert encoder.token_length(token) == len(data)


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k"])
def test_pieces_of_nine_bytes_that_share_a_tokens_first_eight(pattern):
    # Tokens "abababab" + a..m; pieces "abababab" + n..z are none of them, but
    # have their length and first 8 bytes: the whole-token table must compare
    # the rest (in a small table their probes pass over those tokens' slots).
    a, b = b"ab"
    lefts, rights = [a, 256, 257], [b, 256, 257]
    lefts += [258] * 13
    rights += list(b"abcdefghijklm")
    encoder = compiled.Encoder(lefts, rights)
    words = [b"abababab" + bytes([c]) for c in b"abcdefghijklmnopqrstuvwxyz"]
    text = b"\n".join(words)
    split = splitter(PATTERNS[pattern])
    expected = [i for piece in split(text.decode()) for i in replay(lefts, rights, piece.encode())]
    assert encoder.encode(text, compiled.PATTERN_CODES[pattern]) == expected
    assert encoder.encode(text, compiled.PATTERN_CODES[pattern], compiled.PieceCache()) == expected


def test_a_piece_that_is_a_tokens_bytes_may_not_encode_to_that_token():
    # "ab" (rank 0) beats "bc" (rank 1), so "abc" merges to [ab, c], never to
    # token 258 = a + bc, though 258's bytes are "abc": a shortcut that maps a
    # piece found in the vocabulary to its token would be wrong here.
    a, b, c = b"abc"
    encoder = compiled.Encoder([a, b, a], [b, c, 257])
    assert encoder.token_bytes(258) == b"abc"
    cache = compiled.PieceCache()
    for _ in range(2):  # the second time from the piece cache
        assert encoder.encode(b"abc") == encoder.encode_pieces([b"abc"], cache) == [256, c]
    assert _encode_py.Encoder([a, b, a], [b, c, 257]).encode(b"abc") == [256, c]
    assert encoder.encode(b"bc") == [257]


def test_long_tokens_are_expanded_from_their_halves():
    # A chain: token k is token k-1 plus "a"; most are longer than the flat buffer keeps.
    rules = 1000
    lefts = [97] + list(range(256, 256 + rules - 1))
    rights = [97] * rules
    encoder = compiled.Encoder(lefts, rights)
    last = 256 + rules - 1
    assert encoder.token_bytes(last) == b"a" * (rules + 1)
    assert encoder.decode([last, 97, last]) == b"a" * (2 * rules + 3)
    assert encoder.encode(b"a" * (rules + 1)) == replay(lefts, rights, b"a" * (rules + 1))


@pytest.fixture(scope="module")
def genesis():
    documents = demo_documents()
    model = bytepair.train_bytes(documents, 400)
    return model, b"\n".join(documents)


@given(st.data())
def test_hyp_real_model_equals_python_encoder_on_real_text(genesis, data):
    model, text = genesis
    start = data.draw(st.integers(0, len(text) - 1))
    piece = text[start:start + data.draw(st.integers(0, 3000))]
    lefts = [m.left for m in model.merges]
    rights = [m.right for m in model.merges]
    assert compiled.Encoder(lefts, rights).encode(piece) == _encode_py.Encoder(lefts, rights).encode(piece)


@given(st.binary(max_size=300) | st.text(max_size=100).map(str.encode))
def test_hyp_decode_array_equals_decode(genesis, data):
    from array import array

    model, _ = genesis
    ids = model.encode(data)
    encoder = model._codec
    assert encoder.decode_array(array("I", ids)) == encoder.decode(ids) == data
    assert encoder.decode_array(array("H", ids)) == data


def test_decode_refuses_ids_outside_the_vocabulary(genesis):
    model, _ = genesis
    encoder = model._codec
    for bad in (-1, model.vocab_size, 2**70, -(2**70)):
        with pytest.raises(ValueError, match=r"ids\[1\] = .* outside the vocabulary"):
            encoder.decode([97, bad])
    with pytest.raises(TypeError, match=r"ids\[0\] must be an int, got bool"):
        encoder.decode([True])
    with pytest.raises(TypeError, match=r"ids\[2\] must be an int, got str"):
        encoder.decode([1, 2, "3"])
    from array import array

    with pytest.raises(ValueError, match=r"ids\[0\] = 65535 is outside"):
        encoder.decode_array(array("H", [65535]))
    with pytest.raises(TypeError, match="16- or 32-bit"):
        encoder.decode_array(array("b", [1]))


def test_cache_stays_within_its_byte_budget(genesis):
    model, _ = genesis
    lefts = [m.left for m in model.merges]
    rights = [m.right for m in model.merges]
    encoder = compiled.Encoder(lefts, rights)
    budget = 1 << 17
    cache = compiled.PieceCache(budget)
    # 20,000 distinct pieces of 100 to 256 bytes: about 3.5 MB of keys alone.
    pieces = [b"%d " % i * (100 // len(b"%d " % i) + i % 40) for i in range(20_000)]
    assert sum(map(len, pieces)) > 20 * budget
    peak = 0
    for start in range(0, len(pieces), 100):
        assert encoder.encode_pieces(pieces[start:start + 100], cache) == [
            i for piece in pieces[start:start + 100] for i in encoder.encode(piece)]
        peak = max(peak, cache.nbytes)
    assert peak <= budget
    assert cache.stats["resets"] > 0
    with pytest.raises(ValueError, match="budget"):
        compiled.PieceCache(1000)


def test_big_pieces_are_never_cached(genesis):
    model, _ = genesis
    encoder = model._codec
    cache = compiled.PieceCache()
    encoder.encode_pieces([b"x" * 257, b"xy" * 200], cache)
    assert len(cache) == 0
    encoder.encode_pieces([b"x" * 256], cache)
    assert len(cache) == 1


def test_model_uses_the_compiled_encoder(genesis):
    model, _ = genesis
    assert codec.compiled() and isinstance(model._codec, compiled.Encoder)


# --- the tokenizer: every pattern, special tokens, batches ------------------

SPECIALS = ["<|end|>", "<|end|>x", "<pad>"]
PATTERN_NAMES = ["gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "nanochat", None,
                 r"\d+|[a-z]+"]


@pytest.fixture(scope="module")
def tokenizers(real_text):
    text = real_text[:120_000].decode()
    return {name: bytepair.train([text, "  \t\n\n  tabs\tand   spaces  ", "x" * 50], merges=300,
                                 pretokenize=name, special_tokens=SPECIALS, progress=False)
            for name in PATTERN_NAMES}


def reference_encode(tok, text: str, specials=SPECIALS) -> list[int]:
    """Today's encoder (``helpers.reference_encode``), this module's special tokens by default."""
    return helpers.reference_encode(tok, text, specials)


TEXTS = st.lists(st.one_of(st.text(max_size=60), st.sampled_from(SPECIALS),
                           st.sampled_from([" aaaa", "  ", "\n\n", "'s", "123456", "ÉTÉ été", "日本語"])),
                 max_size=8).map("".join)


@pytest.mark.parametrize("name", PATTERN_NAMES)
@given(text=TEXTS)
def test_hyp_tokenizer_equals_todays_encoder(tokenizers, name, text):
    tok = tokenizers[name]
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(ValueError, match="not encodable as UTF-8"):
            tok.encode_ordinary(text)
        return
    ids = tok.encode(text, allowed_special="all")
    assert ids == reference_encode(tok, text)
    assert tok.decode_bytes(ids) == text.encode("utf-8")
    ordinary = tok.encode_ordinary(text)
    assert ordinary == reference_encode(tok, text, specials=())
    assert tok.decode_bytes(ordinary) == text.encode("utf-8")
    assert tok.model.encode(text.encode("utf-8")) == ordinary


@pytest.mark.parametrize("name", ["gpt2", None])
@given(texts=st.lists(TEXTS, max_size=12), threads=st.integers(1, 4))
def test_hyp_encode_batch_equals_mapping_encode(tokenizers, name, texts, threads):
    tok = tokenizers[name]
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
    expected = [tok.encode(t, allowed_special="all") for t in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)  # use threads on tiny batches
        assert tok.encode_batch(texts, threads=threads, allowed_special="all") == expected
    assert tok.decode_bytes_batch(expected) == [t.encode() for t in texts]
    assert tok.decode_batch(expected) == texts


def test_encode_batch_on_real_text_with_threads(tokenizers, real_text):
    tok = tokenizers["gpt2"]
    lines = real_text.decode().splitlines()
    expected = [tok.encode_ordinary(line) for line in lines]
    for threads in (1, 2, 3):
        assert tok.encode_batch(lines, threads=threads) == expected


def test_encode_batch_bad_input(tokenizers):
    tok = tokenizers["gpt2"]
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        tok.encode_batch(["a", b"b"])
    with pytest.raises(ValueError, match="threads"):
        tok.encode_batch(["a"], threads=0)
    with pytest.raises(ValueError, match="special token '<pad>'"):
        tok.encode_batch(["a", "b<pad>"] * 5000, threads=2)


NO_SURROGATES = st.characters(blacklist_categories=("Cs",))


@given(texts=st.lists(st.one_of(st.text(NO_SURROGATES, max_size=80),
                                st.text(st.characters(max_codepoint=255), max_size=80)),
                      max_size=6))
def test_hyp_batch_utf8_equals_str_encode(texts):
    # No rules and no split: the IDs are the UTF-8 bytes the batch encoder made
    # without the GIL from each str's own code units (1, 2 or 4 bytes each).
    encoder = compiled.Encoder([], [])
    assert encoder.encode_batch(texts, codec.PATTERN_NONE) == [list(t.encode()) for t in texts]
    expected = array("I", list(b"".join(t.encode() for t in texts))).tobytes()  # native uint32s
    assert encoder.encode_batch_array(texts, codec.PATTERN_NONE, itemsize=4) == expected


@pytest.mark.parametrize("name", ["gpt2", None])
@given(texts=st.lists(TEXTS, max_size=12), threads=st.integers(1, 3),
       allowed=st.sampled_from([frozenset(), frozenset({"<pad>"}), frozenset({"<|end|>x"})]))
def test_hyp_encode_batch_refuses_exactly_when_encode_does(tokenizers, name, texts, threads,
                                                           allowed):
    tok = tokenizers[name]
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
    expected, refused = [], None
    for index, text in enumerate(texts):
        try:
            expected.append(tok.encode(text, allowed_special=allowed))
        except ValueError as exc:  # the batch names the text by its index
            refused = refused or str(exc).replace("text ", f"texts[{index}] ", 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
        if refused is None:
            assert tok.encode_batch(texts, threads=threads, allowed_special=allowed) == expected
        else:  # the first refused text, whichever thread met it
            with pytest.raises(ValueError) as raised:
                tok.encode_batch(texts, threads=threads, allowed_special=allowed)
            assert str(raised.value) == refused


def test_encode_batch_with_many_special_tokens_takes_the_regex_path(tokenizers):
    many = [f"<|s{i}|>" for i in range(tokenizer_module.FEW_SPECIAL + 4)]
    tok = bytepair.Tokenizer(tokenizers["gpt2"].model, many)
    texts = ["plain text", "one <|s3|> here", "and <|s19|>"] * 400
    expected = [tok.encode(t, allowed_special="all") for t in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
        assert tok.encode_batch(texts, threads=2, allowed_special="all") == expected
        assert tok.encode_batch(texts[:1] * 50, threads=2) == [expected[0]] * 50
        with pytest.raises(ValueError, match=r"<\|s3\|>"):
            tok.encode_batch(texts, threads=2)


def test_batch_errors_name_the_text_across_chunks(tokenizers):
    tok = tokenizers["gpt2"]
    texts = ["fine text"] * 3000 + ["bad \ud800 here"] + ["more"] * 3000
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
        for threads in (1, 2, 3):
            with pytest.raises(ValueError, match=r"texts\[3000\] is not encodable as UTF-8: "
                                                 r"surrogates not allowed at index 4"):
                tok.encode_batch(texts, threads=threads)
            with pytest.raises(ValueError, match=r"texts\[3000\] is not encodable"):
                tok.encode_to_array(texts, threads=threads)
            with pytest.raises(TypeError, match=r"texts\[3001\] must be a str, got int"):
                tok.encode_batch(texts[:3001] + [7], threads=threads)
    with pytest.raises(ValueError, match=r"texts\[1\]: invalid UTF-8 at byte offset 2"):
        tok.model.encode_batch_array([b"ok", b"ab\xff"], 4)


def test_batch_errors_come_in_the_order_encode_gives_them(tokenizers):
    # Text by text as encode: a disallowed special token is refused before text
    # that UTF-8 cannot hold, in the same text or an earlier one.
    tok = tokenizers["gpt2"]
    for texts, message in [(["<|end|>", "\ud800"], r"texts\[0\] contains the special token"),
                           (["ok", "a\ud800<pad>"], r"texts\[1\] contains the special token '<pad>'"),
                           (["\ud800", "<|end|>"], r"texts\[0\] is not encodable as UTF-8"),
                           (["ok", "é\udfff"], r"texts\[1\] is not encodable as UTF-8: "
                                                 r"surrogates not allowed at index 1")]:
        with pytest.raises(ValueError, match=message):
            tok.encode_batch(texts)
        with pytest.raises(ValueError, match=message):
            tok.encode_to_array(texts)
    with pytest.raises(ValueError, match=r"texts\[1\] is not encodable as UTF-8"):
        tok.model.encode_batch(["ok", "\ud800"])
    # Strings that are not special tokens, even ones UTF-8 cannot hold, may be disallowed.
    texts = ["abc", "x \ud800 y", "a <pad>"]
    for text in texts:
        odd = {"\ud800", "zz"}
        try:
            expected = tok.encode(text, disallowed_special=odd)
        except ValueError as exc:
            assert "\\ud800" in str(exc) and "(ID" not in str(exc)
            with pytest.raises(ValueError, match="contains the special token"):
                tok.encode_batch([text], disallowed_special=odd)
        else:
            assert tok.encode_batch([text], disallowed_special=odd) == [expected]


def test_join_lists_takes_lists_only():
    with pytest.raises(TypeError, match=r"parts\[1\] must be a list, got tuple"):
        compiled.join_lists([[1], (2, 3)])


def test_batch_ids_are_encoded_before_their_lists(tokenizers):
    model = tokenizers["gpt2"].model
    batch = model.encode_batch_ids(["a b", "x <pad> y", "c"], skip=("<pad>",))
    assert len(batch) == 3 and batch.skipped() == [1]
    assert batch.lists() == [model.encode("a b"), None, model.encode("c")]


def test_disallowed_special_token_hidden_in_an_allowed_one_is_still_refused(tokenizers):
    tok = tokenizers["gpt2"]
    with pytest.raises(ValueError, match=r"special token '<\|end\|>'"):
        tok.encode("a <|end|>x", allowed_special={"<|end|>x"})
    assert tok.encode("a <|end|>x", allowed_special="all")[-1] == tok.special_tokens["<|end|>x"]


def test_surrogate_error_gives_the_offset_in_the_text(tokenizers):
    tok = tokenizers["gpt2"]
    with pytest.raises(ValueError, match="at index 12"):
        tok.encode_ordinary("hello world \ud800")


def test_long_piece_with_no_rule_that_applies():
    # The heap path with an empty heap (found by the property test above).
    encoder = compiled.Encoder([97], [97])
    assert encoder.encode(b"b" * 100) == [98] * 100
    assert compiled.Encoder([], []).encode(b"xy" * 100) == list(b"xy" * 100)


def test_special_token_matchers_are_built_once(tokenizers):
    tok = bytepair.Tokenizer(tokenizers["gpt2"].model, [f"<|s{i}|>" for i in range(5000)])
    text = "plain text <|s17|> and <|s4999|>"
    ids = tok.encode(text, allowed_special="all")
    matchers = dict(tok._matchers)
    assert tok.encode(text, allowed_special="all") == ids
    assert tok._matchers == matchers and all(tok._matchers[k] is v for k, v in matchers.items())
    assert ids[-1] == tok.special_tokens["<|s4999|>"]
    with pytest.raises(ValueError, match=r"<\|s17\|>"):
        tok.encode(text)


@pytest.mark.parametrize("name", ["gpt2", None, r"\d+|[a-z]+"])
@given(texts=st.lists(TEXTS, max_size=12), threads=st.integers(1, 3),
       append=st.sampled_from([None, 0, "<pad>"]), dtype=st.sampled_from(["uint16", "uint32"]))
def test_hyp_encode_to_array_equals_concatenated_encode_batch(tokenizers, name, texts, threads,
                                                              append, dtype):
    tok = tokenizers[name]
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
    append_id = tok.special_tokens[append] if isinstance(append, str) else append
    expected = [i for ids in tok.encode_batch(texts, allowed_special="all")
                for i in ids + ([] if append_id is None else [append_id])]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
        got = tok.encode_to_array(texts, dtype=dtype, append=append_id, threads=threads,
                                  allowed_special="all")
    assert got.typecode == ("H" if dtype == "uint16" else "I")
    assert got.tolist() == expected


def test_encode_to_array_bad_input(tokenizers):
    tok = tokenizers["gpt2"]
    with pytest.raises(ValueError, match="dtype"):
        tok.encode_to_array(["a"], dtype="int8")
    with pytest.raises(ValueError, match="append"):
        tok.encode_to_array(["a"], append=tok.vocab_size)
    with pytest.raises(TypeError, match=r"texts\[0\]"):
        tok.encode_to_array([b"a"])
    with pytest.raises(ValueError, match="special token"):
        tok.encode_to_array(["a<pad>"])


def test_encode_batch_lists_are_left_out_of_the_cyclic_collector(tokenizers):
    import gc

    tok = tokenizers["gpt2"]
    lists = tok.encode_batch(["a b c", "de"] * 100, threads=1)
    assert lists == [tok.encode("a b c"), tok.encode("de")] * 100
    assert gc.isenabled() and not any(gc.is_tracked(ids) for ids in lists)
    lists[0].append(7)  # still ordinary lists
    assert lists[0][-1] == 7
    # The list that holds them is an ordinary, tracked list, whatever the threads.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parts_module, "THREAD_MIN_CHARS", 1)
        for threads in (1, 3):
            lists = tok.encode_batch(["a b c", "de"] * 100, threads=threads)
            assert gc.is_tracked(lists) and not any(gc.is_tracked(ids) for ids in lists)
    batch = tok.model.encode_batch_ids(["a b", "c"])
    assert not gc.is_tracked(batch.lists(track=False)) and gc.is_tracked(batch.lists())


def test_join_lists_keeps_every_item_in_order():
    import gc

    parts = [[1, 2], [], [[3]], [None, "x"]]
    joined = compiled.join_lists(parts)
    assert joined == [1, 2, [3], None, "x"] == _encode_py.join_lists(parts)
    assert gc.is_tracked(joined) and joined is not parts[0]


def test_rule_records_of_ints_are_left_out_of_the_cyclic_collector(genesis):
    import gc

    model, _ = genesis
    assert model.merges and not any(gc.is_tracked(m) for m in model.merges)
    loaded = bytepair.ByteModel(list(map(tuple, model.merges)), pattern=model.pattern)
    assert not any(gc.is_tracked(m) for m in loaded.merges)
    # Only tuples that hold ints, with no instance dict, are untracked.
    class WithDict(tuple):
        pass

    records = [Merge(0, 97, 98, 256, 1, 1), Merge(0, 97, 98, 256, 1.5, 1), ([], 1),
               WithDict((1, 2))]
    compiled.untrack_int_records(records)
    assert [gc.is_tracked(r) for r in records] == [False, True, True, True]


@pytest.mark.parametrize("backend", [compiled, _encode_py], ids=["compiled", "python"])
def test_a_full_cache_keeps_its_pieces_until_the_text_moves_on(backend):
    # A working set a fifth larger than the cache: a full cache keeps serving the
    # pieces it holds (emptying it each time it filled up made it miss every piece
    # again); text of another kind empties it, and then its pieces are cached.
    encoder, cache = backend.Encoder([], []), backend.PieceCache(1 << 17)

    def pieces(prefix: bytes, count: int) -> list[bytes]:
        return [prefix + b"%06d" % i for i in range(count)]

    for piece in pieces(b"p", 10_000):  # how many pieces of this size fill it
        encoder.encode_pieces([piece], cache)
        if cache.stats["full"]:
            break
    capacity = len(cache)
    cache.clear()
    before = cache.stats
    work = pieces(b"a", capacity * 6 // 5)
    for _ in range(12):  # long use: a cache that served for long must adapt as fast
        encoder.encode_pieces(work, cache)
    stats = cache.stats
    assert stats["full"] and stats["resets"] == before["resets"]
    assert len(cache) == capacity and stats["hits"] - before["hits"] == 11 * capacity
    other = pieces(b"b", capacity * 6 // 5)
    for _ in range(2):
        encoder.encode_pieces(other, cache)
    assert cache.stats["resets"] > before["resets"]
    hits = cache.stats["hits"]
    assert encoder.encode_pieces(other, cache) == [i for p in other for i in p]
    assert cache.stats["hits"] - hits >= capacity // 2  # the new text's pieces are held now


def test_python_path_batch_errors_name_the_text(real_text):
    # A custom pattern encodes through the Python path: its batch errors must
    # read as the compiled path's, naming the text by its index.
    tok = bytepair.train([real_text[:20_000].decode()], merges=50, pretokenize=r"\w+|\s+|[^\w\s]+",
                         special_tokens=SPECIALS, progress=False)
    message = r"texts\[1\] is not encodable as UTF-8: surrogates not allowed at index 1"
    for encode in (tok.encode_batch, tok.encode_to_array, tok.model.encode_batch):
        with pytest.raises(ValueError, match=message):
            encode(["ok", "é\udfff"])
    with pytest.raises(ValueError, match=r"texts\[0\] contains the special token"):
        tok.encode_batch([SPECIALS[0], "\ud800"])
    assert tok.encode_batch(["ok", "é fine"]) == [tok.encode("ok"), tok.encode("é fine")]


#: Characters of every str kind: ASCII, the rest of Latin-1 (kind 1), the BMP (kind 2)
#: and beyond it (kind 4), and lone surrogates, which UTF-8 cannot hold.
UNITS = st.sampled_from(["a", " ", "\x7f", "\x80", "é", "\xff", "\u0100", "’", "日",
                         "\uffff", "\U00010000", "😀", "\U0010ffff", "\ud800", "\udfff"])


@given(st.lists(st.one_of(st.text("ab ", min_size=0, max_size=20), UNITS), max_size=30).map("".join))
def test_hyp_the_utf8_of_a_str_is_str_encode(text):
    # With no rules and no split the IDs are the bytes: the encoder's own UTF-8, ASCII
    # runs eight bytes of input at a time, against Python's. A lone surrogate is refused
    # at its index, by the one-text and the batch paths alike.
    encoder = compiled.Encoder([], [])
    try:
        expected = list(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        message = f"surrogates not allowed at index {exc.start}"
        with pytest.raises(ValueError, match=message):
            encoder.encode(text)
        with pytest.raises(ValueError, match=message):
            encoder.encode_batch(["ok", text])
        return
    assert encoder.encode(text) == expected
    assert encoder.encode_batch(["ok", text, text[1:]]) == [
        list(b"ok"), expected, list(text[1:].encode("utf-8"))]
