"""The transformers directory export: AutoTokenizer.from_pretrained loads it with bytepair's IDs.

Checked with ``transformers`` itself (in the test extra; it runs without PyTorch
for tokenizers): IDs equal, padding of a batch, exact decoding, the special-token
roles; and that a failed export leaves nothing behind.
"""

import json

import pytest

import bytepair
from helpers import DATA

transformers = pytest.importorskip("transformers", reason="transformers is not installed")

END = "<|endoftext|>"
MULTILINGUAL = (DATA / "multilingual-sample.txt").read_text(encoding="utf-8")
ENGLISH = (DATA / "kjv-genesis-exodus.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tok():
    return bytepair.train([ENGLISH[:150_000], MULTILINGUAL], vocab_size=1200, pretokenize="gpt2",
                          special_tokens=[END, "<pad>", "<s>"], progress=False)


def load(directory):
    return transformers.AutoTokenizer.from_pretrained(str(directory))


def test_directory_round_trip(tok, tmp_path):
    out = tmp_path / "tok"
    bytepair.to_transformers(tok, out, bos="<s>", pad="<pad>", model_max_length=1024)
    assert sorted(p.name for p in out.iterdir()) == [
        "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    hf = load(out)
    assert (hf.eos_token, hf.pad_token, hf.bos_token, hf.unk_token) == (END, "<pad>", "<s>", None)
    assert (hf.eos_token_id, hf.pad_token_id, hf.bos_token_id) == (
        tok.special_tokens[END], tok.special_tokens["<pad>"], tok.special_tokens["<s>"])
    assert hf.model_max_length == 1024
    for text in (MULTILINGUAL, ENGLISH[150_000:170_000], f"a{END}b<s> c", "", "  \n\t"):
        ids = hf(text)["input_ids"]
        assert ids == tok.encode(text, allowed_special="all")
        assert hf.decode(ids) == text
    batch = hf(["in the beginning", "and God said, Let there be light"], padding=True)
    short, long = batch["input_ids"]
    assert len(short) == len(long)
    pad = tok.special_tokens["<pad>"]
    real = tok.encode("in the beginning")
    assert short == real + [pad] * (len(long) - len(real))
    assert batch["attention_mask"][0] == [1] * len(real) + [0] * (len(long) - len(real))
    assert hf.decode(short, skip_special_tokens=True) == "in the beginning"


def test_end_of_text_is_eos_and_pad_by_default(tok, tmp_path):
    bytepair.to_transformers(tok, tmp_path / "tok")
    roles = json.loads((tmp_path / "tok" / "special_tokens_map.json").read_text())
    assert roles == {"eos_token": END, "pad_token": END}
    hf = load(tmp_path / "tok")
    assert hf.pad_token_id == hf.eos_token_id == tok.special_tokens[END]
    assert hf(["a", "a b c"], padding=True)["input_ids"][0][-1] == tok.special_tokens[END]


def test_imported_tokenizer_keeps_its_ids(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(ENGLISH[:100_000] + MULTILINGUAL, encoding="utf-8")
    source = tokenizers.Tokenizer(models.BPE())
    source.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    source.decoder = decoders.ByteLevel()
    source.train([str(corpus)], trainers.BpeTrainer(
        vocab_size=900, special_tokens=[END], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    source.save(str(tmp_path / "tokenizer.json"))
    imported = bytepair.load(tmp_path / "tokenizer.json")
    bytepair.to_transformers(imported, tmp_path / "dir")
    hf = load(tmp_path / "dir")
    text = MULTILINGUAL + END + "x"
    assert hf(text)["input_ids"] == source.encode(text).ids == imported.encode(
        text, allowed_special="all")
    assert hf.eos_token_id == 0


def test_refusals_leave_nothing(tok, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError, match="exists and is not empty"):
        bytepair.to_transformers(tok, tmp_path / "full")
    with pytest.raises(ValueError, match=r"bos: '<bos>' is not a special token"):
        bytepair.to_transformers(tok, tmp_path / "new", bos="<bos>")
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileExistsError, match="not a directory"):
        bytepair.to_transformers(tok, tmp_path / "file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "full"]
    (tmp_path / "empty").mkdir()
    bytepair.to_transformers(tok, tmp_path / "empty")  # an empty directory is filled
    assert len(list((tmp_path / "empty").iterdir())) == 3
