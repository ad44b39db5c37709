"""bytepair.extend on Hugging Face byte-level bases: the naive reference, the base kept, reachability."""

from __future__ import annotations

import gzip
import json
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

import extend_reference as reference
import bytepair
from bytepair.formats.bases import read_base
from bytepair.formats.imports import ImportRefused
from bytepair.split.pretokenize import PATTERNS
from helpers import KJV, KJV_REST_GZ, MULTILINGUAL

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers  # noqa: E402

LINES = KJV.read_text(encoding="utf-8").splitlines()  # 2,746 verses: the bases
with gzip.open(KJV_REST_GZ, "rt", encoding="utf-8") as _handle:
    REST = _handle.read().splitlines()[:20_000]  # the text the bases are extended on


def hf_base(texts, vocab_size, *, ignore_merges=False, nfc=False, specials=("<|endoftext|>",),
            added=()):
    """A byte-level base trained by BpeTrainer (GPT-2's pipeline; NFC like Qwen2 on request)."""
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    if nfc:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(specials),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer)
    if added:
        tok.add_special_tokens(list(added))
    return tok


def reference_of(base_json: dict, documents, vocab_size, ignore_merges, nfc=False):
    """The naive reference on a tokenizer.json's vocabulary and merges."""
    base = read_base_document(base_json)
    vocab = {data: token_id for token_id, data in base.tokens.items()}
    spelled = {token_id: data for data, token_id in vocab.items()}
    merges = [(spelled[left], spelled[right]) for left, right, _ in base.merges]
    return reference.extend(documents, vocab=vocab, merges=merges, added=dict(base.added),
                            vocab_size=vocab_size, pattern=PATTERNS["gpt2"],
                            normalizer="NFC" if nfc else None, ignore_merges=ignore_merges)


def read_base_document(document):
    from bytepair.formats.bases import from_tokenizers_document

    return from_tokenizers_document(document)


def saved(extension, path) -> dict:
    extension.save(path)
    return json.loads(path.read_text(encoding="utf-8"))


WORDS = st.sampled_from(["the", " the", "a", "é", "e\u0301", " ", "  ", "<|endoftext|>",
                         "<x>", "ab", "\n", "1"])


@settings(max_examples=25)
@given(st.lists(st.lists(WORDS, max_size=10).map("".join), min_size=1, max_size=10),
       st.booleans(), st.booleans(), st.integers(1, 30))
def test_equals_the_naive_reference(tmp_path_factory, documents, ignore_merges, nfc, more):
    path = tmp_path_factory.mktemp("base") / "base.json"
    hf_base(LINES[:200], 400, ignore_merges=ignore_merges, nfc=nfc, added=["<x>"]).save(str(path))
    document = json.loads(path.read_text())
    size = read_base(path).size + more
    extension = bytepair.extend(path, documents, vocab_size=size)
    expected = reference_of(document, documents, size, ignore_merges, nfc)
    assert [(m.left, m.right, m.token_id) for m in extension.rules] == expected


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_the_base_is_kept(tmp_path, ignore_merges):
    base = hf_base(LINES[:1000], 500, ignore_merges=ignore_merges)
    base.save(str(tmp_path / "base.json"))
    out = saved(bytepair.extend(tmp_path / "base.json", REST[:2000], vocab_size=700),
                tmp_path / "ext.json")
    before = json.loads((tmp_path / "base.json").read_text())
    for token, token_id in before["model"]["vocab"].items():
        assert out["model"]["vocab"][token] == token_id
    n = len(before["model"]["merges"])
    assert out["model"]["merges"][:n] == before["model"]["merges"]
    assert out["added_tokens"] == before["added_tokens"]
    assert len(out["model"]["vocab"]) == 700
    extended = Tokenizer.from_file(str(tmp_path / "ext.json"))
    for ids in ([1, 2, 3], list(range(0, 500, 7)), [300, 0, 299]):
        assert extended.decode(ids) == base.decode(ids)


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_new_tokens_are_reachable_and_coarsen_the_base(tmp_path, ignore_merges):
    base = hf_base(LINES[:1000], 500, ignore_merges=ignore_merges)
    base.save(str(tmp_path / "base.json"))
    extension = bytepair.extend(tmp_path / "base.json", REST[:3000], vocab_size=800)
    extension.save(tmp_path / "ext.json")
    extended = Tokenizer.from_file(str(tmp_path / "ext.json"))
    for token_id, data in extension.new_tokens.items():
        text = data.decode("utf-8", "replace")
        if text.encode() == data:  # a whole piece of text: it must come back as one token
            assert extended.encode(text).ids == [token_id], text
    new = [(m.left, m.right, m.token_id) for m in extension.rules]
    assert extension.added == 300
    for line in REST[5000:5200]:
        got = extended.encode(line).ids
        want = []
        for word, _ in base.pre_tokenizer.pre_tokenize_str(line):
            ids = [token.id for token in base.model.tokenize(word)]  # the base, in this piece
            for left, right, token in new:
                ids = reference.replace(ids, (left, right), token)
            want.extend(ids)
        assert got == want, line


def _bpe_continue(base_path, texts, vocab_size):
    bpe_continue = pytest.importorskip("bpe_continue")
    return json.loads(bpe_continue.continue_training(
        str(base_path), texts=texts, vocab_size=vocab_size, show_progress=False).to_str())


@pytest.mark.parametrize("ignore_merges", [False, True])
@pytest.mark.parametrize("text", ["english", "multilingual"])
def test_equals_bpe_continue(tmp_path, ignore_merges, text):
    if text == "english":
        base_texts, texts, size = LINES, REST[:6000], 1800
    else:
        lines = MULTILINGUAL.read_text(encoding="utf-8").splitlines()
        base_texts, texts, size = LINES, lines * 3, 900
    hf_base(base_texts, 700, ignore_merges=ignore_merges).save(str(tmp_path / "base.json"))
    (tmp_path / "corpus.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    ours = saved(bytepair.extend(tmp_path / "base.json", tmp_path / "corpus.txt",
                                 vocab_size=size, per_line=True), tmp_path / "ext.json")
    assert len(ours["model"]["vocab"]) == size
    assert ours == _bpe_continue(tmp_path / "base.json", texts, size)


def test_added_tokens_outside_the_vocabulary_are_folded_in(tmp_path):
    base = hf_base(LINES[:500], 400, added=["<|im_start|>"])
    base.save(str(tmp_path / "base.json"))
    extension = bytepair.extend(tmp_path / "base.json", REST[:1000], vocab_size=450)
    out = saved(extension, tmp_path / "ext.json")
    assert out["model"]["vocab"]["<|im_start|>"] == 400
    assert min(extension.new_tokens) == 401
    assert extension.embedding_rows == 450
    assert out == _bpe_continue(tmp_path / "base.json", REST[:1000], 450)


def test_added_tokens_in_the_text_are_never_merged(tmp_path):
    hf_base(LINES[:500], 400).save(str(tmp_path / "base.json"))
    texts = [f"{line}<|endoftext|>" for line in REST[:1000]]
    extension = bytepair.extend(tmp_path / "base.json", texts, vocab_size=500)
    spelled = [data for data in extension.new_tokens.values()]
    assert not any(b"<|" in data or b"|>" in data for data in spelled)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["model"].update(type="WordPiece"), "the model is WordPiece"),
    (lambda d: d["model"].update(type="Unigram"), "the model is Unigram"),
    (lambda d: d.update(normalizer={"type": "Lowercase"}), "normalizer (Lowercase)"),
    (lambda d: d["model"].update(byte_fallback=True), "byte_fallback"),
    (lambda d: d.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Removed",
         "invert": False},
        {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]}), "Split behavior 'Removed'"),
    (lambda d: d.update(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": True}]}), "Digits before ByteLevel"),
])
def test_refused_in_one_line(tmp_path, change, message):
    hf_base(LINES[:200], 300).save(str(tmp_path / "base.json"))
    document = json.loads((tmp_path / "base.json").read_text())
    change(document)
    (tmp_path / "other.json").write_text(json.dumps(document))
    with pytest.raises(ImportRefused, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        bytepair.extend(tmp_path / "other.json", ["text"], vocab_size=400)
    assert "\n" not in str(info.value)


def test_vocab_size_must_grow(tmp_path):
    hf_base(LINES[:200], 300).save(str(tmp_path / "base.json"))
    with pytest.raises(ValueError, match="vocab_size must be larger than the 300 tokens"):
        bytepair.extend(tmp_path / "base.json", ["text"], vocab_size=300)


def test_nfc_base_counts_normalized_text(tmp_path):
    hf_base(LINES[:200], 300, nfc=True).save(str(tmp_path / "base.json"))
    decomposed = ["caf\u0065\u0301 " * 5] * 4
    extension = bytepair.extend(tmp_path / "base.json", decomposed, vocab_size=310)
    assert any("é".encode() in data for data in extension.new_tokens.values())
    assert unicodedata.normalize("NFC", decomposed[0]) != decomposed[0]


SEQUENCE = [
    {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": False},
    {"type": "Split", "pattern": {"Regex": PATTERNS["gpt2"]}, "behavior": "Isolated",
     "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]


@settings(max_examples=10)
@given(st.lists(st.lists(st.sampled_from(["12345", " the", "a1b", "7", " ", "x"]), max_size=8)
                .map("".join), min_size=1, max_size=8))
def test_a_sequence_of_splits_as_deepseek(tmp_path_factory, documents):
    """Several Isolated Splits in turn, each cutting every piece again: the reference, and
    bpe-continue."""
    tmp = tmp_path_factory.mktemp("seq")
    tok = hf_base(LINES[:200], 350)
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex("\\p{N}{1,3}"), "isolated"),
        pre_tokenizers.Split(tokenizers.Regex(PATTERNS["gpt2"]), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.save(str(tmp / "base.json"))
    document = json.loads((tmp / "base.json").read_text())
    base = read_base(tmp / "base.json", trust_pattern=True)
    assert base.then
    extension = bytepair.extend(base, documents, vocab_size=370)
    vocab = {data: token_id for token_id, data in base.tokens.items()}
    spelled = {token_id: data for data, token_id in vocab.items()}
    expected = reference.extend(
        documents, vocab=vocab, merges=[(spelled[l], spelled[r]) for l, r, _ in base.merges],
        added=dict(base.added), vocab_size=370, pattern=["\\p{N}{1,3}", PATTERNS["gpt2"]])
    assert [(m.left, m.right, m.token_id) for m in extension.rules] == expected
    assert json.loads(json.dumps(extension.tokenizers_document())) == _bpe_continue(
        tmp / "base.json", documents, 370)
    assert document["pre_tokenizer"] == extension.tokenizers_document()["pre_tokenizer"]


def test_intermediate_tokens_are_never_given_on_the_training_text(tmp_path):
    hf_base(LINES[:500], 400).save(str(tmp_path / "base.json"))
    texts = REST[:1500]
    extension = bytepair.extend(tmp_path / "base.json", texts, vocab_size=900)
    after = extension.as_base()
    given = {token for text in texts for token in after.encode(text)}
    middle = extension.intermediate()
    assert middle, "the case should have intermediate-only tokens"
    assert set(extension.new_tokens) - given == set(middle)


QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def test_a_qwen2_shaped_base(tmp_path):
    """NFC, then a Split with Qwen2's regex, then ByteLevel without one: bpe-continue's file."""
    tok = hf_base(LINES[:1500], 500, nfc=True, specials=("<|endoftext|>", "<|im_start|>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(QWEN2), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.save(str(tmp_path / "base.json"))
    texts = MULTILINGUAL.read_text(encoding="utf-8").splitlines() * 2 + REST[:1000]
    texts = [unicodedata.normalize("NFD", t) if i % 2 else t for i, t in enumerate(texts)]
    extension = bytepair.extend(tmp_path / "base.json", texts, vocab_size=900,
                                trust_pattern=True)
    assert extension.base.normalizer == "NFC" and extension.added == 400
    ours = saved(extension, tmp_path / "ext.json")
    assert ours == _bpe_continue(tmp_path / "base.json", texts, 900)
