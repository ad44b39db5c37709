"""Exports checked by the real libraries.

``tokenizers`` loads the exported ``tokenizer.json`` and ``tiktoken`` the
exported ranks file; both must give exactly bytepair's IDs on held-out real
text (English, Cyrillic, CJK, emoji, long whitespace runs, code) and decode
back to it. Hypothesis tests check the exactness condition of the tiktoken
export (``export.check_tiktoken_exact``) against tiktoken itself.
"""

import base64
import json
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest
import regex
import tiktoken
import tiktoken.load
import tokenizers
from hypothesis import example, given
from hypothesis import strategies as st

import bytepair
from bytepair import ByteModel, Merge, Tokenizer
from bytepair.split import dialects
from bytepair.formats import export
from bytepair.split.pretokenize import PATTERNS, splitter
from helpers import DATA, sampled

SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|é ü|>"]
# Not covering: the text between matches (spaces, punctuation, CJK, ...) is a piece of its own.
CUSTOM = r"[A-Za-z]+|\d"
# Each export check runs on every pattern in CI; by default on a few (see sampled()).
PATTERN_CASES = ["gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", None, CUSTOM]
PATTERN_IDS = ["gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "none", "custom"]

# Whitespace, digits and contractions that the pattern alternatives tell apart.
EDGES = (
    "x  \r\n\r\n  y\u00a0\u00a0z\u3000w\u2028v\u0085u\tt\x0bs\x0cr" + " " * 300 + "end\t\t\t\n"
    + "1234567890" * 5 + " 12 345 6789 ٣٤٥ １２３\n" + "DON'T WE'LL it's I'M Iʼm ŉ ǅungla\n"
    + " \n" * 3 + "a\u0301\u0302 ﬁ 👨\u200d👩\u200d👧 🏳\ufe0f\u200d🌈 \u200c\u200d" + "\n\n\n   "
)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.fixture(scope="session")
def corpus() -> dict:
    """Training text and held-out text: KJV minus its last 800 verses plus half the sample."""
    kjv = _lines(DATA / "kjv-genesis-exodus.txt")
    sample = _lines(DATA / "multilingual-sample.txt")
    train = ["".join(kjv[:-800]), "".join(sample[0::2])]
    held_sample = "".join(sample[1::2])
    held_out = [
        "".join(kjv[-800:]),
        held_sample,
        EDGES,
        f"{SPECIALS[0]}{held_sample[:400]}{SPECIALS[2]} {SPECIALS[1]}\n{SPECIALS[0]}{SPECIALS[0]}",
        "",
    ]
    return {"train": train, "held_out": held_out}


@pytest.fixture(scope="session")
def trained(corpus):
    """``trained(pattern)``: a tokenizer fit on the training text, vocabulary size 8192."""

    @lru_cache(maxsize=None)
    def fit(pattern):
        return bytepair.train(corpus["train"], vocab_size=8192, pretokenize=pattern,
                              special_tokens=SPECIALS, workers=1, progress=False)

    return fit


@pytest.fixture(scope="session")
def held_out(corpus) -> list[str]:
    return corpus["held_out"]


@pytest.fixture(autouse=True)
def no_tiktoken_cache(monkeypatch):
    # load_tiktoken_bpe caches a file under its path name; tests must read what they wrote.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")


def hf_load(tokenizer) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(json.dumps(export.tokenizers_json(tokenizer)))


def raw_tiktoken(model: ByteModel) -> tiktoken.Encoding:
    """tiktoken over a model's ranks, without the exactness check (pattern: none)."""
    ranks = {model.token_bytes(i): i for i in range(model.vocab_size)}
    assert len(ranks) == model.vocab_size
    return tiktoken.Encoding("raw", pat_str=dialects.WHOLE_INPUT_PATTERN, mergeable_ranks=ranks,
                             special_tokens={})


# -- tokenizer.json -----------------------------------------------------------

@pytest.mark.parametrize("pattern", sampled(PATTERN_CASES, keep={"gpt2", "cl100k", CUSTOM}), ids=PATTERN_IDS)
def test_tokenizers_json_gives_bytepairs_ids(tmp_path, trained, held_out, pattern):
    tok = trained(pattern)
    path = tmp_path / "tokenizer.json"
    export.to_tokenizers_json(tok, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.get_vocab_size() == tok.vocab_size
    assert {t: hf.token_to_id(t) for t in SPECIALS} == tok.special_tokens
    for text in held_out:
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids
        assert hf.decode(ids, skip_special_tokens=False) == text


def test_tokenizers_json_layout(trained):
    tok = trained("cl100k")
    doc = export.tokenizers_json(tok)
    model = doc["model"]
    assert model["type"] == "BPE" and model["ignore_merges"] is False
    # Every token, special tokens too (tokenizers would renumber an added token missing there).
    assert len(model["vocab"]) == tok.vocab_size
    assert all(model["vocab"][t] == i for t, i in tok.special_tokens.items())
    assert model["vocab"]["Ġ"] == 32 and model["vocab"]["Ċ"] == 10
    first = tok.merges[0]
    assert model["merges"][0] == [export.token_string(tok.token_bytes(first.left)),
                                  export.token_string(tok.token_bytes(first.right))]
    assert len(model["merges"]) == len(tok.merges)
    split, byte_level = doc["pre_tokenizer"]["pretokenizers"]
    assert split == {"type": "Split", "pattern": {"Regex": dialects.HF_PATTERNS[tok.pattern]},
                     "behavior": "Isolated", "invert": False}
    assert byte_level["type"] == "ByteLevel"
    assert (byte_level["add_prefix_space"], byte_level["use_regex"]) == (False, False)
    assert doc["decoder"]["type"] == "ByteLevel"
    assert [(t["content"], t["id"], t["special"], t["normalized"]) for t in doc["added_tokens"]] == [
        (t, i, True, False) for t, i in tok.special_tokens.items()]
    assert export.tokenizers_json(trained(None))["pre_tokenizer"]["type"] == "ByteLevel"


def _hf_pieces(hf: tokenizers.Tokenizer, text: str) -> list[str]:
    to_byte = {c: b for b, c in export.bytes_to_unicode().items()}
    return [bytes(to_byte[c] for c in piece).decode("utf-8")
            for piece, _ in hf.pre_tokenizer.pre_tokenize_str(text)]


@pytest.mark.parametrize("name", sampled(sorted(PATTERNS), keep={"cl100k"}))
def test_oniguruma_splits_like_regex(trained, held_out, stable_chars, name):
    """Hugging Face's pre-tokenizer, as exported, cuts bytepair's pieces (cl100k needs a fix)."""
    source = PATTERNS[name]
    hf = hf_load(trained(name))
    split = splitter(source)
    for text in [*held_out, stable_chars]:
        assert _hf_pieces(hf, text) == split(text)


def test_oniguruma_reads_cl100k_as_written_differently():
    # Why HF_PATTERNS exists: Oniguruma reads {1,3}+ as "one or more of 1 to 3 digits".
    pieces = tokenizers.pre_tokenizers.Split(tokenizers.Regex(PATTERNS["cl100k"]), "isolated")
    assert [p for p, _ in pieces.pre_tokenize_str("1234567")] == ["1234567"]
    assert splitter(PATTERNS["cl100k"])("1234567") == ["123", "456", "7"]


@pytest.fixture(scope="session")
def stable_chars() -> str:
    """Every character that ``unicodedata`` and ``regex`` put in the same general category.

    This leaves out what the newest Unicode version added or re-categorised
    (``regex`` 2026.5 has Unicode 17; Python 3.11's ``unicodedata`` 14, and
    tokenizers 0.23 and tiktoken 0.14 have 16): such characters' classes
    depend on the library's version, a documented limit of the exports.
    """
    by_category: dict = {}
    chars = []
    for code in range(0x110000):
        char = chr(code)
        category = unicodedata.category(char)
        if category in ("Cn", "Cs"):
            continue
        matcher = by_category.setdefault(category, regex.compile(rf"\p{{{category}}}").match)
        if matcher(char):
            chars.append(char)
    return "".join(chars)


CLASSES = [r"\s", r"\p{L}", r"\p{N}", r"\p{Lu}", r"\p{Ll}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}",
           r"\p{M}", r"\w"]


@pytest.mark.parametrize("cls", sampled(CLASSES, keep={r"\p{L}", r"\w"}))
def test_regex_engines_agree_on_character_classes(stable_chars, cls):
    """Oniguruma (tokenizers) and tiktoken's engine class every stable character as ``regex`` does.

    Oniguruma's own ``\\w`` does not, so the export spells ``regex``'s out.
    """
    expected = "".join(regex.findall(cls, stable_chars))
    onig = dialects.WORD_CHARS.join("[]") if cls == r"\w" else cls
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(onig), "removed", invert=True)
    assert "".join(p for p, _ in split.pre_tokenize_str(stable_chars)) == expected
    bytes_only = {bytes([b]): b for b in range(256)}
    enc = tiktoken.Encoding("classes", pat_str=cls, mergeable_ranks=bytes_only, special_tokens={})
    assert enc.decode(enc.encode_ordinary(stable_chars)) == expected
    if cls == r"\w":
        plain = tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"\w"), "removed", invert=True)
        assert "".join(p for p, _ in plain.pre_tokenize_str(stable_chars)) != expected


@pytest.mark.parametrize("pattern", sampled(PATTERN_CASES, keep={"o200k", "whitespace-split"}), ids=PATTERN_IDS)
def test_exports_give_bytepairs_ids_on_unusual_characters(trained, stable_chars, pattern):
    tok = trained(pattern)
    text = stable_chars[::3]  # every script, symbol and space, in code point order
    ids = tok.encode(text)
    assert hf_load(tok).encode(text).ids == ids
    assert export.tiktoken_encoding(tok).encode(text) == ids


def test_gigatoken_gives_bytepairs_ids(tmp_path, trained, held_out, stable_chars):
    # gigatoken loads bytepair's tokenizer.json (o200k: the pattern its fast splitters
    # know as bytepair writes it) and must give the same IDs on English, other
    # languages, code, unusual white space and every script.
    gigatoken = pytest.importorskip("gigatoken")
    tok = trained("o200k")
    path = tmp_path / "tokenizer.json"
    export.to_tokenizers_json(tok, path)
    giga = gigatoken.Tokenizer(str(path))
    code = Path(export.__file__).read_text(encoding="utf-8")
    for text in held_out[:3] + [code, stable_chars, stable_chars[::-1]]:
        assert giga.encode(text).tolist() == tok.encode_ordinary(text)


# -- tiktoken -------------------------------------------------------------------

@pytest.mark.parametrize("pattern", PATTERN_CASES, ids=PATTERN_IDS)
def test_tiktoken_file_gives_bytepairs_ids(tmp_path, trained, held_out, pattern):
    tok = trained(pattern)
    path = tmp_path / "model.tiktoken"
    export.to_tiktoken(tok, path)
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    assert ranks == {tok.token_bytes(i): i for i in range(tok.model.vocab_size)}
    pat_str = dialects.tiktoken_pattern(tok.pattern)
    if pattern in ("gpt2", "cl100k", "o200k"):
        assert pat_str == tok.pattern
    enc = tiktoken.Encoding("bytepair-test", pat_str=pat_str, mergeable_ranks=ranks,
                            special_tokens=tok.special_tokens)
    for text in held_out:
        ids = tok.encode(text, allowed_special="all")
        assert enc.encode(text, allowed_special="all") == ids
        assert enc.encode_ordinary(text) == tok.encode_ordinary(text)
        assert enc.decode(ids) == text


def test_tiktoken_file_format(tmp_path, trained):
    tok = trained("gpt2")
    path = tmp_path / "model.tiktoken"
    export.to_tiktoken(tok, path)
    lines = path.read_text(encoding="ascii").splitlines()
    assert len(lines) == tok.model.vocab_size
    for token_id, line in enumerate(lines):
        encoded, rank = line.split(" ")
        assert (base64.b64decode(encoded), int(rank)) == (tok.token_bytes(token_id), token_id)


def test_tiktoken_encoding_helper(trained, held_out):
    tok = trained("o200k")
    enc = export.tiktoken_encoding(tok, name="kjv")
    assert (enc.name, enc.n_vocab) == ("kjv", tok.vocab_size)
    text = held_out[3]
    for allowed in ["all", {SPECIALS[0]}, set()]:
        disallowed = () if allowed != "all" else "all"
        assert (enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                == tok.encode(text, allowed_special=allowed, disallowed_special=disallowed))
    # Both refuse special-token text by default.
    with pytest.raises(ValueError):
        enc.encode(SPECIALS[0])
    with pytest.raises(ValueError):
        tok.encode(SPECIALS[0])


def test_tiktoken_and_bytepair_merge_differently():
    """tiktoken merges by the rank of the joined bytes, bytepair by the rule (pair) rank.

    Rules (b, c), (a, b), (ab, c): bytepair encodes "abc" as [a, bc]; tiktoken
    returns the whole piece "abc" as its token. The export refuses this model,
    and Hugging Face, which merges by pair rank, agrees with bytepair.
    """
    a, b, c = b"abc"
    model = ByteModel([Merge(0, b, c, 256, 1, 1), Merge(1, a, b, 257, 1, 1),
                       Merge(2, 257, c, 258, 1, 1)])
    assert model.encode(b"abc") == [a, 256]
    assert raw_tiktoken(model).encode_ordinary("abc") == [258]
    assert raw_tiktoken(model).encode_ordinary("xabc") == [ord("x"), 258]
    assert hf_load(model).encode("abc").ids == [a, 256]
    with pytest.raises(ValueError, match=r"token 258 \(b'abc', rule \(257, 99\)\) encodes to \[97, 256\]"):
        export.check_tiktoken_exact(model)


# -- the exactness condition, against tiktoken itself ---------------------------

ALPHABET = b"abc"
TEXTS = st.text(alphabet="abc", max_size=30)


@st.composite
def rule_tables(draw) -> ByteModel:
    """Any rule table over a three-letter alphabet: each rule joins two earlier tokens."""
    tokens = list(ALPHABET)
    merges: list = []
    seen = set()
    for left_index, right_index in draw(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)),
                                                 max_size=14)):
        pair = (tokens[left_index % len(tokens)], tokens[right_index % len(tokens)])
        if pair in seen:
            continue
        seen.add(pair)
        rank = len(merges)
        merges.append(Merge(rank, *pair, 256 + rank, 1, 1))
        tokens.append(256 + rank)
    return ByteModel(merges)


def _has_duplicate_bytes(model: ByteModel) -> bool:
    return len({model.token_bytes(i) for i in range(model.vocab_size)}) < model.vocab_size


@given(rule_tables(), st.lists(TEXTS, max_size=5))
def test_hyp_tiktoken_exact_iff_every_token_encodes_to_itself(model, texts):
    if _has_duplicate_bytes(model):
        with pytest.raises(ValueError, match="both stand for the bytes"):
            export.check_tiktoken_exact(model)
        return
    enc = raw_tiktoken(model)
    learned = [model.token_bytes(t).decode() for t in range(256, model.vocab_size)]
    try:
        export.check_tiktoken_exact(model)
    except ValueError as exc:
        # Refused: then tiktoken really differs, on the named token's own bytes.
        token = int(regex.search(r"token (\d+)", str(exc)).group(1))
        text = model.token_bytes(token).decode()
        assert enc.encode_ordinary(text) == [token] != model.encode(text)
    else:
        # Accepted: tiktoken gives bytepair's IDs on any text.
        for text in [*texts, *learned, "".join(learned)]:
            assert enc.encode_ordinary(text) == model.encode(text)


@given(st.lists(st.text(alphabet="abc", max_size=16), min_size=1, max_size=6),
       st.integers(0, 30), st.lists(TEXTS, max_size=5))
@example(["abcabcbc", "abab", "bcbc"], 30, ["abc"])
def test_hyp_trained_models_are_tiktoken_exact(documents, merges, texts):
    model = bytepair.train_bytes(documents, merges)
    export.check_tiktoken_exact(model)
    enc = export.tiktoken_encoding(model)
    for text in [*documents, *texts]:
        assert enc.encode_ordinary(text) == model.encode(text)


@given(rule_tables(), st.lists(TEXTS, max_size=5))
def test_hyp_tokenizers_json_exact_for_any_rule_table(model, texts):
    """Hugging Face merges by pair rank, as bytepair does: exact whenever the bytes are distinct."""
    if _has_duplicate_bytes(model):
        with pytest.raises(ValueError, match="both stand for the bytes"):
            export.tokenizers_json(model)
        return
    hf = hf_load(model)
    for text in texts:
        assert hf.encode(text).ids == model.encode(text)


# -- special tokens -----------------------------------------------------------

def test_special_token_spelled_like_a_learned_token(tmp_path, trained):
    tok = trained("gpt2")
    word = next(tok.token_bytes(i).decode() for i in range(256, tok.model.vocab_size)
                if tok.token_bytes(i).isalpha() and len(tok.token_bytes(i)) > 3)
    clashing = Tokenizer(tok.model, [word])
    # Hugging Face would hand the special token the learned token's ID: refused.
    with pytest.raises(ValueError, match=f"special token '{word}' .* spelled like the vocabulary entry"):
        export.to_tokenizers_json(clashing, tmp_path / "tokenizer.json")
    assert not (tmp_path / "tokenizer.json").exists()
    # tiktoken keeps special and ordinary tokens apart: exact.
    enc = export.tiktoken_encoding(clashing)
    text = f"{word} and {word}{word}"
    assert enc.encode(text, allowed_special="all") == clashing.encode(text, allowed_special="all")
    assert enc.encode_ordinary(text) == clashing.encode_ordinary(text)


def test_special_tokens_that_are_prefixes_of_one_another(trained):
    tok = Tokenizer(trained("gpt2").model, ["<|a|>", "<|a|>b", "<|b"])
    text = "x<|a|>b<|a|><|b<|a|>bb"
    ids = tok.encode(text, allowed_special="all")
    assert ids[1] == tok.special_tokens["<|a|>b"]  # the longest match
    assert hf_load(tok).encode(text).ids == ids
    with pytest.raises(ValueError, match="'<\\|a\\|>' is a prefix of '<\\|a\\|>b'"):
        export.tiktoken_encoding(tok)


# -- refusals and bad output paths ----------------------------------------------

def _duplicate_model() -> ByteModel:
    a, b, c = b"abc"
    return ByteModel([Merge(0, b, c, 256, 1, 1), Merge(1, a, b, 257, 1, 1),
                      Merge(2, a, 256, 258, 1, 1), Merge(3, 257, c, 259, 1, 1)])


@pytest.mark.parametrize("method", ["to_tokenizers_json", "to_tiktoken"])
def test_duplicate_bytes_refused(tmp_path, method):
    tok = Tokenizer(_duplicate_model(), ["<|end|>"])
    path = tmp_path / "out"
    with pytest.raises(ValueError, match=r"token IDs 258 and 259 both stand for the bytes b'abc'"):
        getattr(export, method)(tok, path)
    assert list(tmp_path.iterdir()) == []


def test_inexact_tiktoken_model_refused_and_old_file_kept(tmp_path):
    a, b, c = b"abc"
    model = ByteModel([Merge(0, b, c, 256, 1, 1), Merge(1, a, b, 257, 1, 1),
                       Merge(2, 257, c, 258, 1, 1)])
    path = tmp_path / "model.tiktoken"
    path.write_text("keep me\n")
    with pytest.raises(ValueError, match="cannot export to tiktoken exactly: token 258"):
        export.to_tiktoken(model, path)
    assert path.read_text() == "keep me\n"
    assert [p.name for p in tmp_path.iterdir()] == ["model.tiktoken"]


@pytest.mark.parametrize("method", ["to_tokenizers_json", "to_tiktoken"])
def test_missing_directory(tmp_path, trained, method):
    target = tmp_path / "missing" / "out"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        getattr(export, method)(trained("gpt2"), target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method", ["to_tokenizers_json", "to_tiktoken"])
def test_output_is_a_directory(tmp_path, trained, method):
    (tmp_path / "out").mkdir()
    with pytest.raises(OSError):
        getattr(export, method)(trained("gpt2"), tmp_path / "out")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert list((tmp_path / "out").iterdir()) == []


def test_not_a_model(tmp_path):
    with pytest.raises(TypeError, match="Tokenizer or ByteModel"):
        export.to_tiktoken("model.json", tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("source, construct", [
    (r"\d{1,3}+|\D", "{n,m}+"),
    (r"\w+$|\W", "$"),
    (r"^\w+|\W|\w", "^"),
    (r"(?m)\w+|\W", "(?m)"),
    (r"(?s:.)", "(?s)"),
    (r"\w+\Z|.", "\\Z"),
])
def test_custom_patterns_oniguruma_reads_differently_are_refused(source, construct):
    with pytest.raises(ValueError, match=regex.escape(construct)):
        dialects.hf_pattern(source)


@pytest.mark.parametrize("source", [r"(a)\1|.", r"(?P<x>a)|.", r"\w+$|\W"])
def test_custom_patterns_tiktoken_cannot_take_are_refused(source):
    with pytest.raises(ValueError, match="cannot give pattern"):
        dialects.tiktoken_pattern(source)


def test_custom_pattern_constructs_inside_classes_are_fine():
    assert dialects.hf_pattern(r"[$^]+|[^\w$]") == r"[$^]+|[^\w$]"
    assert dialects.regex_constructs(r"[]$]|\$|\^") == set()
