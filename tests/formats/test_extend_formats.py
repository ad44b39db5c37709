"""Extended tokenizers load elsewhere with bytepair's IDs: transformers directories, tiktoken
files, bytepair models; and ``bytepair extend`` on the command line."""

from __future__ import annotations

import gzip
import json
import os

import pytest

import bytepair
from bytepair.cli.main import main
from bytepair.formats.bases import read_base
from helpers import KJV, KJV_REST_GZ

LINES = KJV.read_text(encoding="utf-8").splitlines()
with gzip.open(KJV_REST_GZ, "rt", encoding="utf-8") as _handle:
    REST = _handle.read().splitlines()[:6000]
HELD_OUT = REST[5000:5300]
CHAT = "{% for m in messages %}<|endoftext|>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"


@pytest.fixture
def hf_json(tmp_path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(LINES, trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<|endoftext|>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    path = tmp_path / "base.json"
    tok.save(str(path))
    return path


def test_transformers_directory_stays_a_directory(tmp_path, hf_json):
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer

    fast = transformers.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_file(str(hf_json)), eos_token="<|endoftext|>")
    fast.chat_template = CHAT
    fast.save_pretrained(tmp_path / "base")
    extension = bytepair.extend(tmp_path / "base", REST[:3000], vocab_size=900)
    assert extension.save(tmp_path / "out") == "transformers"
    base_files = sorted(os.listdir(tmp_path / "base"))
    assert sorted(os.listdir(tmp_path / "out")) == base_files
    for name in base_files:
        if name != "tokenizer.json":
            assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "base" / name).read_bytes()
    loaded = transformers.AutoTokenizer.from_pretrained(tmp_path / "out")
    assert loaded.chat_template == CHAT and len(loaded) == 900
    after = extension.as_base()
    for line in HELD_OUT:
        ids = loaded.encode(line, add_special_tokens=False)
        assert ids == after.encode(line) == extension.encode(line)
        assert extension.decode(ids) == loaded.decode(ids) == line
    new = sorted(extension.new_tokens)
    assert extension.decode(new) == loaded.decode(new)
    with pytest.raises(ValueError, match="ID 900 is not in the vocabulary"):
        extension.decode([900])
    text = loaded.apply_chat_template([{"role": "user", "content": HELD_OUT[0]}], tokenize=False)
    assert loaded.encode(text, add_special_tokens=False) == after.encode(text)
    assert after.encode(text)[0] == 0  # the special token, split out


def test_tiktoken_base_gives_ranks_and_special_tokens(tmp_path, monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    tok = bytepair.train(LINES, vocab_size=700, special_tokens=["<|endoftext|>"],
                         pretokenize="cl100k")
    bytepair.to_tiktoken(tok, tmp_path / "base.tiktoken")
    extension = bytepair.extend(tmp_path / "base.tiktoken", REST[:3000], vocab_size=900,
                                pattern="cl100k",
                                special_tokens=str(tmp_path / "base.tiktoken.special_tokens.json"))
    assert extension.save(tmp_path / "out.tiktoken") == "tiktoken"
    specials = json.loads((tmp_path / "out.tiktoken.special_tokens.json").read_text())
    assert specials == {"<|endoftext|>": 699}
    enc = tiktoken.Encoding("extended", pat_str=bytepair.tiktoken_pattern(tok.pattern),
                            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                str(tmp_path / "out.tiktoken")), special_tokens=specials)
    after = extension.as_base()
    for line in HELD_OUT:
        text = line + "<|endoftext|>"
        assert enc.encode(text, allowed_special="all") == after.encode(text)
        assert enc.encode(line)[:3] != [] and tok.encode(line) == extension.base.encode(line)
    for token_id, data in extension.new_tokens.items():
        assert enc.encode_single_token(data) == token_id


def test_bytepair_base_gives_a_bytepair_model(tmp_path):
    tok = bytepair.train(LINES, vocab_size=700, special_tokens=["<|endoftext|>"])
    tok.save(tmp_path / "base.json")
    extension = bytepair.extend(tmp_path / "base.json", REST[:3000], vocab_size=900)
    assert extension.save(tmp_path / "out.json") == "bytepair"
    loaded = bytepair.load(tmp_path / "out.json")
    assert loaded.vocab_size == 900 and loaded.token_to_id("<|endoftext|>") == 699
    for ids in ([1, 2, 3], list(range(0, 700, 5))):
        assert loaded.decode_bytes(ids) == tok.decode_bytes(ids)
    for line in HELD_OUT:
        assert loaded.encode(line) == extension.as_base().encode(line)


def test_tokenizers_base_written_as_tiktoken(tmp_path, hf_json, monkeypatch):
    tiktoken = pytest.importorskip("tiktoken")
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    extension = bytepair.extend(hf_json, REST[:3000], vocab_size=800)
    extension.save(tmp_path / "out.tiktoken", to="tiktoken")
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "out.tiktoken"))
    assert len(ranks) == 799 and max(ranks.values()) == 799  # ID 0 is the special token


def test_cli_extend(tmp_path, hf_json, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(REST[:3000]) + "\n", encoding="utf-8")
    sample = tmp_path / "held.txt"
    sample.write_text("\n".join(HELD_OUT) + "\n", encoding="utf-8")
    code = main(["extend", str(hf_json), str(corpus), "--per-line", "--vocab-size", "800",
                 "-o", str(tmp_path / "out.json"), "--eval", f"{sample}=en"])
    assert code == 0
    out, err = capsys.readouterr()
    assert "600 + 200 new tokens = 800" in err and "needs 800 rows" in err
    assert out.startswith("en: ") and "bytes per token" in out
    before, after = (float(x) for x in out.split(":")[1].split("bytes")[0].split("->"))
    assert after > before
    document = json.loads((tmp_path / "out.json").read_text())
    assert len(document["model"]["vocab"]) == 800


def test_cli_refuses_another_model_in_one_line(tmp_path, hf_json, capsys):
    document = json.loads(hf_json.read_text())
    document["model"]["type"] = "Unigram"
    (tmp_path / "uni.json").write_text(json.dumps(document))
    (tmp_path / "c.txt").write_text("some text\n")
    code = main(["extend", str(tmp_path / "uni.json"), str(tmp_path / "c.txt"),
                 "--vocab-size", "800", "-o", str(tmp_path / "out.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Unigram" in err
    assert not (tmp_path / "out.json").exists()


def _unreachable_base(path, ignore_merges=True, merges=(("b", "a"), ("a", "b"), ("ab", "a"))):
    """A byte-level tokenizer.json whose token 'aba' the merges never make ('ba' goes first)."""
    from bytepair.formats.export import bytes_to_unicode

    vocab = {char: byte for byte, char in bytes_to_unicode().items()}
    vocab.update({"ba": 256, "ab": 257, "aba": 258})
    document = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
                "normalizer": None,
                "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                                  "trim_offsets": True, "use_regex": True},
                "post_processor": None,
                "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                            "use_regex": True},
                "model": {"type": "BPE", "dropout": None, "unk_token": None,
                          "continuing_subword_prefix": None, "end_of_word_suffix": None,
                          "fuse_unk": False, "byte_fallback": False,
                          "ignore_merges": ignore_merges, "vocab": vocab,
                          "merges": [list(pair) for pair in merges]}}
    path.write_text(json.dumps(document))
    return path


def test_inspect_lists_unreachable_tokens(tmp_path, capsys):
    path = _unreachable_base(tmp_path / "tok.json")
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "unreachable tokens: 1 (given only for a piece that is exactly their bytes" in out
    assert "258  'aba'" in out


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_a_new_merge_that_spells_an_unreachable_token_takes_its_id(tmp_path, ignore_merges):
    path = _unreachable_base(tmp_path / "tok.json", ignore_merges)
    texts = ["xabay xabay xaba"] * 5
    extension = bytepair.extend(path, texts, vocab_size=262)
    made = [(m.left, m.right, m.token_id) for m in extension.rules]
    assert (ord("a"), 256, 258) in made  # 'a' + 'ba' is 'aba': its ID, no new token
    from tokenizers import Tokenizer

    extension.save(tmp_path / "out.json")
    loaded = Tokenizer.from_file(str(tmp_path / "out.json"))
    assert loaded.encode("aba").ids == [258]
    bpe_continue = pytest.importorskip("bpe_continue")
    theirs = json.loads(bpe_continue.continue_training(
        str(path), texts=texts, vocab_size=262, show_progress=False).to_str())
    assert json.loads((tmp_path / "out.json").read_text()) == theirs


def test_a_tokenizer_json_written_as_a_transformers_directory(tmp_path, hf_json):
    transformers = pytest.importorskip("transformers")
    extension = bytepair.extend(hf_json, REST[:2000], vocab_size=700)
    assert extension.save(tmp_path / "out", to="transformers") == "transformers"
    loaded = transformers.AutoTokenizer.from_pretrained(tmp_path / "out")
    after = extension.as_base()
    for line in HELD_OUT[:50]:
        assert loaded.encode(line, add_special_tokens=False) == after.encode(line)
    assert not (tmp_path / "out.partial").exists()


def test_a_directory_that_is_not_empty_is_refused(tmp_path, hf_json):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    extension = bytepair.extend(hf_json, REST[:200], vocab_size=650)
    with pytest.raises(ValueError, match="is not empty"):
        extension.save(tmp_path / "out", to="transformers")
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


def test_a_token_made_by_two_merges_as_llama3_files_have(tmp_path):
    """Two merges make 'aba' (as converted tiktoken files list every split): not ordinary BPE,
    so the base is encoded by the plain statement of tokenizers' BPE; still bpe-continue's file."""
    merges = (("b", "a"), ("a", "b"), ("ab", "a"), ("a", "ba"))
    path = _unreachable_base(tmp_path / "tok.json", False, merges)
    base = read_base(path)
    assert base._inner is None and base.encode_piece(b"aba") == [258]
    texts = ["xabay abab ababa"] * 4
    extension = bytepair.extend(path, texts, vocab_size=263)
    extension.save(tmp_path / "out.json")
    bpe_continue = pytest.importorskip("bpe_continue")
    theirs = json.loads(bpe_continue.continue_training(
        str(path), texts=texts, vocab_size=263, show_progress=False).to_str())
    assert json.loads((tmp_path / "out.json").read_text()) == theirs


def test_cli_refuses_a_format_that_cannot_hold_the_base_before_any_work(tmp_path, hf_json, capsys):
    document = json.loads(hf_json.read_text())
    document["normalizer"] = {"type": "NFC"}
    (tmp_path / "nfc.json").write_text(json.dumps(document))
    (tmp_path / "c.txt").write_text("some text\n")
    code = main(["extend", str(tmp_path / "nfc.json"), str(tmp_path / "c.txt"),
                 "--vocab-size", "800", "--to", "tiktoken", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "--to tiktoken: this base's pipeline (NFC)" in err


def test_the_command_names_the_formats_the_library_writes():
    from bytepair.cli import extending
    from bytepair.formats import extended

    assert extending.FORMATS == extended.FORMATS
