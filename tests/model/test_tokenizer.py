"""The Tokenizer type: vocabulary look-ups and batch decoding."""

import pytest

import bytepair
from bytepair import ByteModel, Merge, Tokenizer
from helpers import KJV


@pytest.fixture(scope="module")
def tok():
    lines = KJV.read_bytes()[:40_000].decode().splitlines()
    return bytepair.train(lines, merges=300, special_tokens=["<|end|>", "<|pad|>"], workers=1,
                          progress=False)


def test_vocab_maps_every_tokens_bytes_to_its_id(tok):
    vocab = tok.vocab()
    assert len(vocab) == tok.vocab_size == 256 + 300 + 2
    assert all(vocab[tok.id_to_token(i)] == i for i in range(tok.vocab_size))
    assert vocab[b"<|end|>"] == tok.special_tokens["<|end|>"] == 556


def test_token_to_id_inverts_id_to_token(tok):
    assert [tok.token_to_id(tok.id_to_token(i)) for i in range(tok.vocab_size)] == list(range(tok.vocab_size))
    assert tok.token_to_id("<|pad|>") == 557
    learned = tok.id_to_token(300).decode()
    assert tok.token_to_id(learned) == 300  # text is looked up by its UTF-8 bytes
    assert tok.token_to_id("no such token in the vocabulary") is None
    with pytest.raises(TypeError, match="token must be bytes or str"):
        tok.token_to_id(300)


def test_shared_bytes_keep_the_smaller_id():
    # A special token spelled like a learned token: the learned (smaller) ID wins in vocab().
    tok = Tokenizer(bytepair.train_bytes(["aaa"], 1), ["aa"])
    assert tok.vocab()[b"aa"] == 256
    assert tok.token_to_id("aa") == 257  # text names the special token first
    hand_made = ByteModel([Merge(0, 97, 98, 256, 1, 1), Merge(1, 98, 99, 257, 1, 1),
                           Merge(2, 256, 99, 258, 1, 1), Merge(3, 97, 257, 259, 1, 1)])
    assert Tokenizer(hand_made).vocab()[b"abc"] == 258


def test_decode_batch_decodes_each_sequence(tok):
    texts = ["In the beginning", "", "<|end|> é ü"]
    batch = tok.encode_batch(texts, allowed_special="all")
    assert tok.decode_batch(batch) == texts
    assert tok.decode_batch([[0xC3]]) == ["\ufffd"]
    with pytest.raises(UnicodeDecodeError):
        tok.decode_batch([[0xC3]], errors="strict")


def test_a_tokenizer_is_built_from_a_byte_model_only():
    tok = bytepair.train(["aaa aba"], merges=2, special_tokens=["<s>"], progress=False)
    with pytest.raises(TypeError, match=r"^model must be a ByteModel, got Tokenizer; use tok.model$"):
        Tokenizer(tok)
    with pytest.raises(TypeError, match=r"^model must be a ByteModel, got WordModel$"):
        Tokenizer(bytepair.train_words({"ab": 2}, 1))
