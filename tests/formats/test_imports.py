"""Imports: a Hugging Face tokenizer.json and a tiktoken ranks file, read by bytepair.load.

Each imported tokenizer must give the IDs of the library the file comes from:
checked against ``tokenizers`` and ``tiktoken`` themselves on Hypothesis text
(tiny alphabets, runs, multi-byte UTF-8, special tokens) and on real
multilingual text. What cannot be reproduced exactly is refused, one line
naming the feature.
"""

import base64
import json
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load  # the ranks-file reader is a submodule
import tokenizers
from hypothesis import given, strategies as st
from tokenizers import decoders, models, pre_tokenizers, trainers

import bytepair
from bytepair.formats.export import bytes_to_unicode, tiktoken_pattern
from bytepair.split.dialects import HF_PATTERNS
from bytepair.split.pretokenize import PATTERNS
from helpers import DATA

END = "<|endoftext|>"
MULTILINGUAL = (DATA / "multilingual-sample.txt").read_text(encoding="utf-8")
ENGLISH = (DATA / "kjv-genesis-exodus.txt").read_text(encoding="utf-8")
#: Texts full of ties, runs, multi-byte characters and special-token text.
TEXTS = st.lists(st.sampled_from(["a", "b", " ", "aa", "é", "\n", "😀", "th", " the", "1", "!",
                                  END, "<pad>", "<|"]), max_size=40).map("".join)


def hf_trained(tmp_path, pre_tokenizer, vocab_size=1200, name="tokenizer.json") -> str:
    """A tokenizer.json trained by tokenizers' BpeTrainer on the KJV sample."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(ENGLISH[:200_000] + MULTILINGUAL, encoding="utf-8")
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[END, "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train([str(corpus)], trainer)
    path = tmp_path / name
    tok.save(str(path))
    return str(path)


@pytest.fixture(scope="module")
def byte_level(tmp_path_factory):
    """(path, tokenizers.Tokenizer, bytepair Tokenizer) for ByteLevel with its GPT-2 regex."""
    path = hf_trained(tmp_path_factory.mktemp("hf"), pre_tokenizers.ByteLevel(add_prefix_space=False))
    return path, tokenizers.Tokenizer.from_file(path), bytepair.load(path)


@pytest.fixture(scope="module")
def split_cl100k(tmp_path_factory):
    """The same, pre-tokenized by a Split (cl100k) then ByteLevel without its regex."""
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(HF_PATTERNS[PATTERNS["cl100k"]]), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    path = hf_trained(tmp_path_factory.mktemp("hf"), pre)
    return path, tokenizers.Tokenizer.from_file(path), bytepair.load(path)


def assert_same(hf, tok, text):
    ids = hf.encode(text).ids
    assert tok.encode(text, allowed_special="all") == ids
    assert tok.decode(ids) == text


# -- tokenizer.json --------------------------------------------------------

def test_bpe_trainer_ids_are_kept(byte_level):
    path, hf, tok = byte_level
    vocab = hf.get_vocab()
    # BpeTrainer numbers special tokens first, then its alphabet by character: not bytepair's
    # scheme, so the tokenizer carries the map.
    assert tok.ids is not None
    assert tok.special_tokens == {END: vocab[END], "<pad>": vocab["<pad>"]} == {END: 0, "<pad>": 1}
    assert tok.vocab_size == hf.get_vocab_size()
    assert tok.pattern == PATTERNS["gpt2"]
    to_byte = {char: byte for byte, char in bytes_to_unicode().items()}
    for token, token_id in vocab.items():
        data = token.encode() if token in (END, "<pad>") else bytes(to_byte[c] for c in token)
        assert tok.token_bytes(token_id) == data
        assert tok.token_to_id(data) == token_id


@pytest.mark.parametrize("text", [MULTILINGUAL, ENGLISH[200_000:260_000], "", " \n\n\t  x   ",
                                  f"in the beginning{END}and so<pad><pad>"])
def test_bpe_trainer_real_text(byte_level, split_cl100k, text):
    for _, hf, tok in (byte_level, split_cl100k):
        assert_same(hf, tok, text)


@given(text=TEXTS)
def test_bpe_trainer_hypothesis_text(byte_level, split_cl100k, text):
    for _, hf, tok in (byte_level, split_cl100k):
        assert_same(hf, tok, text)


def test_split_pattern_is_the_named_one(split_cl100k):
    assert split_cl100k[2].pattern == PATTERNS["cl100k"]


def test_batch_and_array_give_the_mapped_ids(byte_level):
    _, hf, tok = byte_level
    lines = MULTILINGUAL.splitlines()
    expected = [e.ids for e in hf.encode_batch(lines)]
    assert tok.encode_batch(lines, threads=2, allowed_special="all") == expected
    flat = tok.encode_to_array(lines, dtype="uint16", append=tok.special_tokens[END])
    assert list(flat) == [i for ids in expected for i in ids + [0]]
    assert tok.decode_bytes(flat) == "".join(line + END for line in lines).encode()


def test_merges_as_strings_read_the_same(byte_level, tmp_path):
    path, hf, tok = byte_level
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    assert isinstance(data["model"]["merges"][0], list)
    data["model"]["merges"] = [" ".join(pair) for pair in data["model"]["merges"]]
    old = tmp_path / "old-style.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    again = bytepair.load(old)
    assert again == tok
    assert tokenizers.Tokenizer.from_file(str(old)).encode(MULTILINGUAL).ids == \
        again.encode(MULTILINGUAL)


def test_ignore_merges_is_exact_for_trained_tokens(byte_level, tmp_path):
    path, _, tok = byte_level
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    data["model"]["ignore_merges"] = True
    changed = tmp_path / "ignore.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(changed))
    loaded = bytepair.load(changed)
    for text in (MULTILINGUAL, ENGLISH[:20_000]):
        assert loaded.encode(text) == hf.encode(text).ids


def test_saved_with_its_id_map(byte_level, tmp_path):
    _, hf, tok = byte_level
    tok.save(tmp_path / "model.json")
    header = json.loads((tmp_path / "model.json").read_text())
    assert header["version"] == 2 and header["ids"] == tok.ids
    again = bytepair.load(tmp_path / "model.json")
    assert again.ids == tok.ids
    assert again.encode(MULTILINGUAL) == hf.encode(MULTILINGUAL).ids


def test_exports_keep_the_imported_ids(byte_level, tmp_path):
    _, hf, tok = byte_level
    bytepair.to_tokenizers_json(tok, tmp_path / "again.json")
    again = tokenizers.Tokenizer.from_file(str(tmp_path / "again.json"))
    text = MULTILINGUAL + END
    assert again.encode(text).ids == hf.encode(text).ids
    assert bytepair.load(tmp_path / "again.json").encode(text, allowed_special="all") == \
        hf.encode(text).ids


# -- round trips of bytepair's own exports ------------------------------------

@pytest.fixture(scope="module")
def own():
    return bytepair.train([ENGLISH[:150_000], MULTILINGUAL], vocab_size=1500, pretokenize="cl100k",
                          special_tokens=[END], progress=False)


def test_own_tokenizers_json_round_trip(own, tmp_path):
    bytepair.to_tokenizers_json(own, tmp_path / "tokenizer.json")
    loaded = bytepair.load(tmp_path / "tokenizer.json")
    assert loaded.ids is None  # bytepair's own scheme: no map
    assert loaded.special_tokens == own.special_tokens
    assert [(m.left, m.right) for m in loaded.merges] == [(m.left, m.right) for m in own.merges]
    assert loaded.pattern == own.pattern
    assert loaded.encode(MULTILINGUAL) == own.encode(MULTILINGUAL)


def test_own_tiktoken_round_trip(own, tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    bytepair.to_tiktoken(own, tmp_path / "ranks.tiktoken")
    loaded = bytepair.load(tmp_path / "ranks.tiktoken", pattern="cl100k_base")
    assert loaded.ids is None and loaded.pattern == own.pattern
    assert [(m.left, m.right) for m in loaded.merges] == [(m.left, m.right) for m in own.merges]
    encoding = tiktoken.Encoding("own", pat_str=tiktoken_pattern(own.pattern), special_tokens={},
                                 mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                     str(tmp_path / "ranks.tiktoken")))
    for text in (MULTILINGUAL, ENGLISH[150_000:200_000], "aaaa  \n\n é😀"):
        assert loaded.encode_ordinary(text) == encoding.encode_ordinary(text)


def permuted_ranks(tok) -> dict[bytes, int]:
    """bytepair's ranks with the single bytes renumbered in GPT-2's printable-first order, as
    tiktoken's own files number them."""
    order = sorted(range(256), key=lambda b: ord(bytes_to_unicode()[b]))
    ranks = bytepair.tiktoken_ranks(tok)
    for rank, byte in enumerate(order):
        ranks[bytes([byte])] = rank
    return ranks


@pytest.fixture(scope="module")
def tiktoken_pair(own, tmp_path_factory):
    """(tiktoken.Encoding, bytepair Tokenizer) from one ranks file with bytes not in byte order."""
    ranks = permuted_ranks(own)
    path = tmp_path_factory.mktemp("tiktoken") / "permuted.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n"
                            for t, r in sorted(ranks.items(), key=lambda item: item[1])))
    encoding = tiktoken.Encoding("permuted", pat_str=tiktoken_pattern(own.pattern),
                                 mergeable_ranks=ranks, special_tokens={})
    return encoding, bytepair.load(path, pattern="cl100k")


def test_tiktoken_file_real_text(tiktoken_pair):
    encoding, tok = tiktoken_pair
    assert tok.ids is not None
    for text in (MULTILINGUAL, ENGLISH[150_000:200_000]):
        ids = encoding.encode_ordinary(text)
        assert tok.encode_ordinary(text) == ids
        assert tok.decode(ids) == text


@given(text=TEXTS)
def test_tiktoken_file_hypothesis_text(tiktoken_pair, text):
    encoding, tok = tiktoken_pair
    assert tok.encode_ordinary(text) == encoding.encode_ordinary(text)


# -- the ID map ------------------------------------------------------------

def test_id_map_is_checked_and_identity_dropped():
    model = bytepair.train_bytes(["aaab"], 2)
    size = model.vocab_size + 1
    assert bytepair.Tokenizer(model, ["<s>"], ids=range(size)).ids is None
    with pytest.raises(ValueError, match="one ID per token"):
        bytepair.Tokenizer(model, ["<s>"], ids=[0])
    with pytest.raises(ValueError, match=r"ids\[0\] and ids\[1\] are both 5"):
        bytepair.Tokenizer(model, ["<s>"], ids=[5, 5, *range(2, size)])
    mapped = bytepair.Tokenizer(model, ["<s>"], ids=[size - 1 - i for i in range(size)])
    assert mapped.special_tokens == {"<s>": 0}
    assert mapped.token_bytes(0) == b"<s>" and mapped.token_bytes(size - 1 - 97) == b"a"
    assert mapped.encode("aaab<s>", allowed_special="all") == [
        size - 1 - i for i in model.encode(b"aaab")] + [0]
    assert mapped.token_to_id(b"aa") == size - 1 - 256
    # Truncating keeps the ID order of the tokens it keeps, closed up from 0.
    cut = mapped.truncate(257)
    assert cut.vocab_size == 257 and cut.special_tokens == {"<s>": 0}
    assert [cut.token_bytes(i) for i in cut.encode("aaab")] == [b"a", b"a", b"a", b"b"]
    with pytest.raises(ValueError, match="outside|vocabulary|range"):
        mapped.decode_bytes([size])


# -- refusals ----------------------------------------------------------------

def _edit(data, feature):
    model = data["model"]
    if feature == "normalizer":
        data["normalizer"] = {"type": "Lowercase"}
    elif feature == "dropout":
        model["dropout"] = 0.1
    elif feature == "WordPiece":
        model["type"] = "WordPiece"
    elif feature in ("continuing_subword_prefix", "end_of_word_suffix"):
        model[feature] = "##"
    elif feature == "byte_fallback":
        model["byte_fallback"] = True
    elif feature == "post_processor":
        data["post_processor"] = {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": END, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [], "special_tokens": {END: {"id": END, "ids": [0], "tokens": [END]}}}
    elif feature == "add_prefix_space":
        data["pre_tokenizer"]["add_prefix_space"] = True
    elif feature == "behavior":
        data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r"\s+"}, "behavior": "Removed", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]}
    elif feature == "lacks":
        del model["vocab"]["Ā"]
    elif feature == "lstrip":
        data["added_tokens"][0]["lstrip"] = True
    elif feature == "truncation":
        data["truncation"] = {"max_length": 5, "strategy": "LongestFirst", "stride": 0,
                              "direction": "Right"}
    elif feature == "not byte-level":
        data["pre_tokenizer"] = {"type": "Whitespace"}
    elif feature == "byte-level alphabet":
        model["merges"][5] = ["a", "\u4e00"]
    elif feature == "trust_pattern":
        data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": r"\p{L}+|\P{L}+"}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]}
    return data


@pytest.mark.parametrize("feature", [
    "normalizer", "dropout", "WordPiece", "continuing_subword_prefix", "end_of_word_suffix",
    "byte_fallback", "post_processor", "add_prefix_space", "behavior", "lacks", "lstrip",
    "truncation", "not byte-level", "byte-level alphabet", "trust_pattern"])
def test_unsupported_feature_is_named(byte_level, tmp_path, feature):
    data = _edit(json.loads(Path(byte_level[0]).read_text(encoding="utf-8")), feature)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(bytepair.ModelFormatError) as caught:
        bytepair.load(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{str(path)!r}: cannot read this tokenizer.json exactly: ")
    assert feature in message


def test_custom_split_pattern_with_trust(byte_level, tmp_path):
    data = _edit(json.loads(Path(byte_level[0]).read_text(encoding="utf-8")), "trust_pattern")
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = bytepair.load(path, trust_pattern=True)
    assert tok.encode(MULTILINGUAL) == hf.encode(MULTILINGUAL).ids


def test_tiktoken_needs_a_pattern(own, tmp_path):
    bytepair.to_tiktoken(own, tmp_path / "ranks.tiktoken")
    with pytest.raises(bytepair.ModelFormatError, match="holds no pattern: name one"):
        bytepair.load(tmp_path / "ranks.tiktoken")
    with pytest.raises(ValueError, match="pattern: unknown pattern 'gpt4'"):
        bytepair.load(tmp_path / "ranks.tiktoken", pattern="gpt4")
    own.save(tmp_path / "model.json")
    with pytest.raises(bytepair.ModelFormatError, match="only a tiktoken ranks file takes a pattern"):
        bytepair.load(tmp_path / "model.json", pattern="gpt2")


def test_tiktoken_refusals(own, tmp_path):
    ranks = bytepair.tiktoken_ranks(own)
    lines = [f"{base64.b64encode(t).decode()} {r}" for t, r in ranks.items()]
    cases = {
        "gap": (lines[:-2] + lines[-1:], "no token has rank"),
        "byte": ([line for line in lines if line != lines[97]], "single bytes"),
        "base64": (lines + ["@@@@ 99999"], "line"),
    }
    for name, (text, words) in cases.items():
        path = tmp_path / f"{name}.tiktoken"
        path.write_text("\n".join(text) + "\n")
        with pytest.raises(bytepair.ModelFormatError, match=words) as caught:
            bytepair.load(path, pattern="cl100k")
        assert "\n" not in str(caught.value)


def test_tiktoken_token_that_no_merge_makes(tmp_path):
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"abc"] = 256  # no two lower-ranked tokens make it
    path = tmp_path / "odd.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    with pytest.raises(bytepair.ModelFormatError, match=r"b'abc' \(rank 256\) is not made by"):
        bytepair.load(path, pattern="gpt2")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(["", "a b", "Ġ", "BPE"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "id", "content", "Regex", "pretokenizers", "a"]), inner,
        max_size=3),
    max_leaves=6)
PLACES = [("model",), ("model", "vocab"), ("model", "merges"), ("model", "type"),
          ("model", "merges", 0), ("pre_tokenizer",), ("pre_tokenizer", "use_regex"),
          ("added_tokens",), ("added_tokens", 0), ("added_tokens", 0, "id"), ("normalizer",),
          ("post_processor",), ("decoder",), ("model", "vocab", "Ġ")]


@given(place=st.sampled_from(PLACES), value=JSON_VALUES)
def test_malformed_tokenizer_json_is_one_clear_error(byte_level, tmp_path_factory, place, value):
    data = json.loads(Path(byte_level[0]).read_text(encoding="utf-8"))
    target = data
    for key in place[:-1]:
        target = target[key]
    target[place[-1]] = value
    path = tmp_path_factory.mktemp("bad") / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        bytepair.load(path)
    except bytepair.ModelFormatError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)


BYTE_LEVEL_NO_REGEX = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                       "use_regex": False}


@pytest.mark.parametrize("change", [
    {"post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                        "use_regex": True}},
    {"normalizer": {"type": "Sequence", "normalizers": []}},
    {"decoder": None},
    {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False},
        BYTE_LEVEL_NO_REGEX]}},
    {"pre_tokenizer": BYTE_LEVEL_NO_REGEX},
], ids=["post_processor ByteLevel", "empty normalizer", "no decoder", "Split on a string",
        "ByteLevel without regex"])
def test_accepted_variants_encode_as_tokenizers(byte_level, tmp_path, change):
    data = json.loads(Path(byte_level[0]).read_text(encoding="utf-8"))
    data.update(change)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = bytepair.load(path)
    for text in (MULTILINGUAL, ENGLISH[:5000] + END, "  a  b\n\n"):
        assert tok.encode(text, allowed_special="all") == hf.encode(text).ids


#: The Split regex of Llama 3's tokenizer.json: not a named pattern, read with trust_pattern.
LLAMA3_SPLIT = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
                r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")


@pytest.fixture(scope="module")
def split_llama3(tmp_path_factory):
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(LLAMA3_SPLIT), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    path = hf_trained(tmp_path_factory.mktemp("hf"), pre, vocab_size=900)
    return tokenizers.Tokenizer.from_file(path), bytepair.load(path, trust_pattern=True)


@given(text=TEXTS | st.text(alphabet="aB1 \n\r\t'sSé😀٣ß", max_size=20))
def test_trusted_custom_split_hypothesis_text(split_llama3, text):
    hf, tok = split_llama3
    assert tok.pattern == LLAMA3_SPLIT
    assert tok.encode(text, allowed_special="all") == hf.encode(text).ids


def test_trusted_custom_split_real_text(split_llama3):
    hf, tok = split_llama3
    assert tok.encode(MULTILINGUAL) == hf.encode(MULTILINGUAL).ids


def test_evaluate_an_imported_tokenizer(byte_level):
    _, hf, tok = byte_level
    lines = MULTILINGUAL.splitlines()
    table = bytepair.evaluate(tok, {"multi": lines}, sizes=[800])
    twin = bytepair.evaluate(bytepair.Tokenizer(tok.model, list(tok.special_tokens)),
                             {"multi": lines}, sizes=[800])
    assert table.rows == twin.rows
    full = [row for row in table.rows if row["vocab_size"] == tok.vocab_size][0]
    assert full["tokens"] == sum(len(e.ids) for e in hf.encode_batch(lines))


@pytest.mark.parametrize("name", ["whitespace", "whitespace-split", "nanochat", "o200k"])
def test_own_export_with_each_named_pattern_reads_back(name, tmp_path):
    tok = bytepair.train([MULTILINGUAL] * 2, vocab_size=500, pretokenize=name,
                         special_tokens=[END], progress=False)
    bytepair.to_tokenizers_json(tok, tmp_path / "tokenizer.json")
    loaded = bytepair.load(tmp_path / "tokenizer.json")
    assert loaded.pattern == tok.pattern and loaded.ids is None
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for text in (MULTILINGUAL, ENGLISH[:20_000] + END):
        assert loaded.encode(text, allowed_special="all") == hf.encode(text).ids


@given(seed=st.integers(0, 2**32 - 1), texts=st.lists(TEXTS, max_size=5))
def test_any_id_map_is_a_relabelling(tmp_path_factory, seed, texts):
    import random

    plain = bytepair.train(["aaab aaab the the é😀 1!", *texts], merges=12, pretokenize="gpt2",
                           special_tokens=[END, "<pad>"], progress=False)
    ids = list(range(plain.vocab_size))
    random.Random(seed).shuffle(ids)
    mapped = bytepair.Tokenizer(plain.model, list(plain.special_tokens), ids=ids)
    relabel = ids.__getitem__
    for text in texts:
        expected = list(map(relabel, plain.encode(text, allowed_special="all")))
        assert mapped.encode(text, allowed_special="all") == expected
        assert mapped.decode(expected) == text
    assert mapped.encode_batch(texts, allowed_special="all") == [
        list(map(relabel, ids_)) for ids_ in plain.encode_batch(texts, allowed_special="all")]
    assert list(mapped.encode_to_array(texts, append=ids[plain.special_tokens[END]],
                                       allowed_special="all")) == [
        relabel(i) for i in plain.encode_to_array(texts, append=plain.special_tokens[END],
                                                  allowed_special="all")]
    assert mapped.vocab() == {data: relabel(i) for data, i in plain.vocab().items()}
    path = tmp_path_factory.mktemp("map") / "model.json"
    mapped.save(path)
    assert bytepair.load(path) == mapped
