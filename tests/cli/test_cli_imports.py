"""The command line with imported tokenizers: --pattern for tiktoken files, refusals as one
line (exit 2), and export --to transformers."""

import json
from array import array
from pathlib import Path

import pytest
import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

import bytepair
from helpers import DATA, assert_bad_input, run

END = "<|endoftext|>"
MULTILINGUAL = (DATA / "multilingual-sample.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def hf_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli-imports")
    corpus = folder / "corpus.txt"
    corpus.write_text((DATA / "kjv-genesis-exodus.txt").read_text()[:100_000] + MULTILINGUAL)
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train([str(corpus)], trainers.BpeTrainer(
        vocab_size=800, special_tokens=[END], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return path, tok


def test_encode_and_decode_give_the_source_ids(hf_file, capsys):
    path, hf = hf_file
    text = "In the beginning" + END + "Ελληνικά"
    code, out, _ = run(capsys, "encode", path, text, "--allow-special")
    assert code == 0
    ids = [int(i) for i in out.split()]
    assert ids == hf.encode(text).ids
    code, out, _ = run(capsys, "decode", path, *map(str, ids))
    assert (code, out) == (0, text)


def test_training_array_of_an_imported_tokenizer(hf_file, tmp_path, capsys):
    path, hf = hf_file
    lines = MULTILINGUAL.splitlines()
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run(capsys, "encode", path, tmp_path / "in.txt", "--per-line", "--append", END,
                       "--dtype", "uint16", "-o", tmp_path / "out.bin", "--quiet")
    assert code == 0, err
    ids = array("H", (tmp_path / "out.bin").read_bytes())
    # Each line keeps its newline; the end-of-text token follows it.
    assert list(ids) == [i for e in hf.encode_batch([line + "\n" for line in lines])
                         for i in e.ids + [0]]


def test_tiktoken_file_needs_pattern(tmp_path, capsys):
    tok = bytepair.train([MULTILINGUAL] * 2, vocab_size=400, pretokenize="o200k", progress=False)
    bytepair.to_tiktoken(tok, tmp_path / "ranks.tiktoken")
    code, out, _ = run(capsys, "encode", tmp_path / "ranks.tiktoken", "--pattern", "o200k_base",
                       "Ελληνικά words")
    assert code == 0 and [int(i) for i in out.split()] == tok.encode("Ελληνικά words")
    assert_bad_input(capsys, tmp_path, ["encode", tmp_path / "ranks.tiktoken", "x"],
                     "tiktoken ranks file", "--pattern")
    assert_bad_input(capsys, tmp_path, ["vocab", tmp_path / "ranks.tiktoken", "--pattern", "gpt4"],
                     "--pattern: unknown pattern 'gpt4'")


@pytest.mark.parametrize("feature, edit", [
    ("normalizer", lambda d: d.update(normalizer={"type": "NFC"})),
    ("dropout", lambda d: d["model"].update(dropout=0.5)),
    ("continuing_subword_prefix", lambda d: d["model"].update(continuing_subword_prefix="##")),
    ("byte_fallback", lambda d: d["model"].update(byte_fallback=True)),
])
def test_unsupported_feature_through_the_cli(hf_file, tmp_path, capsys, feature, edit):
    data = json.loads(Path(hf_file[0]).read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    assert_bad_input(capsys, tmp_path, ["encode", tmp_path / "tokenizer.json", "hi"],
                     "cannot read this tokenizer.json exactly", feature)


def test_export_to_transformers(hf_file, tmp_path, capsys):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    path, hf = hf_file
    code, _, err = run(capsys, "export", path, "--to", "transformers", "-o", tmp_path / "dir")
    assert code == 0, err
    assert "eos '<|endoftext|>', pad '<|endoftext|>'" in err
    loaded = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "dir"))
    assert loaded(MULTILINGUAL + END)["input_ids"] == hf.encode(MULTILINGUAL + END).ids
    assert loaded.pad_token_id == loaded.eos_token_id == 0


def test_export_to_transformers_refusals(hf_file, tmp_path, capsys):
    path, _ = hf_file
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert_bad_input(capsys, tmp_path, ["export", path, "--to", "transformers", "-o",
                                        tmp_path / "full"], "-o:", "not empty")
    assert_bad_input(capsys, tmp_path, ["export", path, "--to", "transformers", "-o",
                                        tmp_path / "new", "--unk", "<unk>"],
                     "--unk: '<unk>' is not a special token")
    assert_bad_input(capsys, tmp_path, ["export", path, "--to", "tiktoken", "-o",
                                        tmp_path / "t.tiktoken", "--eos", END],
                     "--eos: only for --to transformers")


def test_evaluate_takes_imported_files(hf_file, tmp_path, capsys):
    path, hf = hf_file
    code, out, err = run(capsys, "evaluate", path, "--sample", DATA / "multilingual-sample.txt",
                         "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows[0]["tokens"] == sum(len(hf.encode(line).ids) for line in [MULTILINGUAL])
    tok = bytepair.train([MULTILINGUAL] * 2, vocab_size=400, pretokenize="cl100k", progress=False)
    bytepair.to_tiktoken(tok, tmp_path / "ranks.tiktoken")
    code, out, err = run(capsys, "evaluate", tmp_path / "ranks.tiktoken", "--pattern", "cl100k",
                         "--sample", DATA / "multilingual-sample.txt", "--json")
    assert code == 0, err
    assert json.loads(out)["rows"][0]["tokens"] == len(tok.encode(MULTILINGUAL))


def test_converts_between_the_formats(hf_file, tmp_path, capsys, monkeypatch):
    import tiktoken
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file just written
    path, hf = hf_file
    code, _, err = run(capsys, "export", path, "--to", "tiktoken", "-o", tmp_path / "x.tiktoken")
    assert code == 0, err
    pattern = bytepair.tiktoken_pattern(bytepair.load(path).pattern)
    encoding = tiktoken.Encoding("converted", pat_str=pattern,
                                 mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
                                     str(tmp_path / "x.tiktoken")),
                                 special_tokens={END: 0})
    text = MULTILINGUAL + END + " and so"
    assert encoding.encode(text, allowed_special="all") == hf.encode(text).ids
    # And back: the tiktoken file (with its pattern named) to a tokenizer.json.
    bytepair.to_tiktoken(bytepair.train([MULTILINGUAL] * 2, vocab_size=400, pretokenize="gpt2",
                                        progress=False), tmp_path / "own.tiktoken")
    code, _, err = run(capsys, "export", tmp_path / "own.tiktoken", "--pattern", "gpt2", "--to",
                       "tokenizers", "-o", tmp_path / "own.json")
    assert code == 0, err
    own = tokenizers.Tokenizer.from_file(str(tmp_path / "own.json"))
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "own.tiktoken"))
    tk = tiktoken.Encoding("own", pat_str=bytepair.tiktoken_pattern(bytepair.load(
        tmp_path / "own.tiktoken", pattern="gpt2").pattern), mergeable_ranks=ranks, special_tokens={})
    assert own.encode(MULTILINGUAL).ids == tk.encode_ordinary(MULTILINGUAL)
