"""Properties of trained models: vocabulary, encode/decode, and the model file."""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import ByteModel
from bytepair.teach.demo import demo_documents
from bytepair.learn.rules import replace_pair

# Tiny alphabets make the learned rules apply often to new input.
ALPHABETS = [b"ab", b"a b", "é日".encode(), b"\x00\xff"]
MERGES = st.integers(min_value=0, max_value=30)


@st.composite
def corpora(draw):
    """Training documents over one tiny alphabet, and that alphabet."""
    alphabet = draw(st.sampled_from(ALPHABETS))
    document = st.lists(st.sampled_from(alphabet), max_size=16).map(bytes)
    return draw(st.lists(document, min_size=1, max_size=6)), alphabet


def over(alphabet: bytes):
    """Bytes spelled with ``alphabet``."""
    return st.lists(st.sampled_from(alphabet), max_size=40).map(bytes)


def replay(model, data: bytes) -> list[int]:
    """Encoding by definition: every rule, in rank order, one left-to-right pass each."""
    tokens = list(data)
    for m in model.merges:
        tokens, _ = replace_pair(tokens, m.left, m.right, m.token_id)
    return tokens


@pytest.fixture(scope="module")
def genesis_model():
    """A model with a few hundred rules fitted on real text (shipped with the package)."""
    return bytepair.train_bytes(demo_documents(), 400)


@pytest.fixture(scope="module")
def genesis_text() -> bytes:
    return b"\n".join(demo_documents())


# --- the vocabulary ---------------------------------------------------------


@given(corpora(), MERGES)
def test_hyp_rules_are_well_formed(corpus, merges):
    documents, _ = corpus
    model = bytepair.train_bytes(documents, merges)
    assert len(model.merges) <= merges
    assert model.vocab_size == 256 + len(model.merges)
    for rank, m in enumerate(model.merges):
        assert (m.rank, m.token_id) == (rank, 256 + rank)
        assert m.left < m.token_id and m.right < m.token_id
        assert 1 <= m.replacements <= m.count
        assert model.token_bytes(m.token_id) == model.token_bytes(m.left) + model.token_bytes(m.right)
    pairs = [(m.left, m.right) for m in model.merges]
    assert len(set(pairs)) == len(pairs)


@given(
    st.dictionaries(st.text("ab", max_size=8), st.integers(1, 2**40), max_size=6),
    MERGES,
    st.sampled_from([None, "</w>"]),
)
def test_hyp_word_rules_are_well_formed(counts, merges, end_of_word):
    model = bytepair.train_words(counts, merges, end_of_word=end_of_word)
    assert model.rules == [(m.left, m.right) for m in model.merges]
    for rank, m in enumerate(model.merges):
        assert m.rank == rank
        assert m.token_id == m.left + m.right
        assert 1 <= m.replacements <= m.count
    # A training word's final symbols spell it, and encoding it gives them again.
    suffix = end_of_word or ""
    assert set(model.words) == set(counts)
    for word, symbols in model.words.items():
        assert "".join(symbols) == word + suffix
        assert model.encode(word) == list(symbols)


# --- encode and decode ------------------------------------------------------


@given(corpora(), MERGES)
def test_hyp_encoding_a_training_document_gives_its_sequence(corpus, merges):
    documents, _ = corpus
    model = bytepair.train_bytes(documents, merges)
    assert [model.encode(d) for d in documents] == model.sequences


@given(corpora(), MERGES, st.data())
def test_hyp_encode_equals_rank_order_replay(corpus, merges, data):
    documents, alphabet = corpus
    model = bytepair.train_bytes(documents, merges)
    text = data.draw(st.one_of(over(alphabet), st.binary(max_size=40)))
    assert model.encode(text) == replay(model, text)


@given(corpora(), MERGES, st.data())
def test_hyp_decode_inverts_encode(corpus, merges, data):
    documents, alphabet = corpus
    model = bytepair.train_bytes(documents, merges)
    text = data.draw(st.one_of(over(alphabet), st.binary(max_size=40)))
    ids = model.encode(text)
    assert model.decode(ids) == text
    assert all(0 <= i < model.vocab_size for i in ids)


@given(st.binary())
def test_hyp_real_model_round_trips_any_bytes(genesis_model, data):
    assert genesis_model.decode(genesis_model.encode(data)) == data


@given(st.text())
def test_hyp_str_is_encoded_as_utf8(genesis_model, text):
    assert genesis_model.encode(text) == genesis_model.encode(text.encode("utf-8"))


@given(st.data())
def test_hyp_real_model_encode_equals_replay(genesis_model, genesis_text, data):
    start = data.draw(st.integers(0, len(genesis_text) - 1))
    piece = genesis_text[start : start + data.draw(st.integers(0, 300))]
    ids = genesis_model.encode(piece)
    assert ids == replay(genesis_model, piece)
    assert genesis_model.decode(ids) == piece


def test_real_model_compresses_its_training_text(genesis_model):
    documents = demo_documents()
    assert [genesis_model.encode(d) for d in documents] == genesis_model.sequences
    assert sum(map(len, genesis_model.sequences)) < sum(map(len, documents))


def test_encode_and_decode_of_empty_input(genesis_model):
    assert genesis_model.encode(b"") == []
    assert genesis_model.encode("") == []
    assert genesis_model.decode([]) == b""


# --- the model file ---------------------------------------------------------


@given(corpora(), MERGES)
def test_hyp_byte_model_save_load_round_trips(corpus, merges):
    documents, alphabet = corpus
    model = bytepair.train_bytes(documents, merges)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "model.json"
        model.save(path)
        loaded = bytepair.load(path)
        assert os.listdir(directory) == ["model.json"]
    assert isinstance(loaded, bytepair.ByteModel)
    assert loaded == model
    assert loaded.merges == model.merges
    assert loaded.vocab_size == model.vocab_size
    assert [loaded.token_bytes(i) for i in range(loaded.vocab_size)] == [
        model.token_bytes(i) for i in range(model.vocab_size)
    ]
    assert [loaded.encode(d) for d in documents] == model.sequences


@given(
    st.dictionaries(st.text(max_size=8), st.integers(1, 2**40), max_size=6),
    MERGES,
    st.one_of(st.none(), st.text(min_size=1, max_size=4)),
)
def test_hyp_word_model_save_load_round_trips(counts, merges, end_of_word):
    model = bytepair.train_words(counts, merges, end_of_word=end_of_word)
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "words.json")
        model.save(path)
        loaded = bytepair.load(path)
    assert isinstance(loaded, bytepair.WordModel)
    assert loaded == model
    assert loaded.merges == model.merges
    assert loaded.end_of_word == model.end_of_word
    assert [loaded.encode(w) for w in counts] == [list(s) for s in model.words.values()]


def test_saved_file_names_its_format_on_the_first_line(tmp_path):
    path = tmp_path / "model.json"
    bytepair.train_bytes(["aaa", "aba"], 2).save(path)
    first_line = path.read_text(encoding="utf-8").splitlines()[0]
    assert '"format": "bytepair-model"' in first_line
    assert '"version": 1' in first_line


def test_save_replaces_an_existing_file(tmp_path):
    path = tmp_path / "model.json"
    bytepair.train_bytes(["aaa"], 1).save(path)
    bigger = bytepair.train_bytes(["aaa", "aba"], 2)
    bigger.save(str(path))  # str paths work as well as Path objects
    assert bytepair.load(path) == bigger
    assert os.listdir(tmp_path) == ["model.json"]


def test_saved_file_permissions_follow_the_umask(tmp_path):
    # A model file is an ordinary output file: it should be created with the
    # same permissions as open(path, "w") would give it, not the private 0o600
    # of a temporary file.
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    path = tmp_path / "model.json"
    bytepair.train_bytes(["aaa"], 1).save(path)
    assert oct(path.stat().st_mode & 0o777) == oct(plain.stat().st_mode & 0o777)


def test_lone_surrogates_are_refused_before_training_and_never_half_saved(tmp_path):
    # Any str is a word, including one holding a lone surrogate; it is not text.
    with pytest.raises(ValueError, match=r"word_counts key 'a\\ud800b' holds a lone surrogate"):
        bytepair.train_words({"a\ud800b": 2}, 3)
    # A model made by hand with such a symbol cannot be written as UTF-8: no file appears.
    made = bytepair.WordModel([bytepair.Merge(0, "a", "\ud800", "a\ud800", 1, 1)])
    with pytest.raises(UnicodeEncodeError):
        made.save(tmp_path / "words.json")
    assert list(tmp_path.iterdir()) == []


def test_duplicate_documents_get_their_own_sequence_lists():
    # Duplicates are trained once; their transformed sequences must not alias.
    model = bytepair.train_bytes([b"abab", b"abab"], 1)
    model.sequences[0].append(0)
    assert model.sequences[1] == [256, 256]


def test_rule_sides_must_be_ints_not_just_index_like():
    # The column checks accept what the rule-by-rule walk accepts: ints (bools too),
    # not objects that merely convert to an int, which the model file could not hold.
    class IndexLike:
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

        def __repr__(self):
            return f"IndexLike({self.value})"

    with pytest.raises(ValueError, match=r"merges\[0\] joins IndexLike\(97\), which is not a token"):
        ByteModel([(0, IndexLike(97), 98, 256, 5, 3)])
    assert ByteModel([(0, True, 98, 256, 5, 3)]).merges[0].left is True


def test_a_trained_model_is_the_checked_model_of_its_rules(real_text):
    # Training builds its model without the constructor's checks (the rules hold by
    # construction); the checked constructor must accept them and give the same model.
    from bytepair.model.models import ByteModel

    tokenizer = bytepair.train(real_text.decode("utf-8").splitlines()[:2000], vocab_size=1200,
                               progress=False)
    checked = ByteModel(tokenizer.merges, pattern=tokenizer.model.pattern)
    assert checked == tokenizer.model
    text = real_text.decode("utf-8")[:20000]
    assert checked.encode(text) == tokenizer.model.encode(text)


def test_a_named_pattern_is_compiled_only_when_the_model_splits_with_it():
    # Importing regex and compiling the pattern cost 20-25 ms per process; the
    # compiled encoder splits named patterns itself. A bad custom pattern is still
    # refused when the model is made.
    import subprocess
    import sys

    from bytepair.model.models import ByteModel
    from bytepair.split.pretokenize import PATTERNS

    code = ("import sys, bytepair; from bytepair.split.pretokenize import PATTERNS; "
            "bytepair.ByteModel([], pattern=PATTERNS['cl100k']); print('regex' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    for name in ("gpt2", "cl100k", "o200k"):
        model = ByteModel([], pattern=PATTERNS[name])
        text = "Hello world's end!! 123 \u00e9t\u00e9\n\n  x"
        assert model.decode(model.encode(text)) == text.encode()
    with pytest.raises(ValueError, match="not a valid regex"):
        ByteModel([], pattern="(")
