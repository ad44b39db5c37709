"""Round trips through other libraries' files lose nothing: a tiktoken export keeps its special
tokens (beside the ranks, as tiktoken.Encoding takes them), and the transformers directory that
bytepair writes is a model for every command that takes one."""

import json
from pathlib import Path

import pytest

import bytepair
from bytepair.formats.export import tiktoken_pattern, tiktoken_special_tokens_path
from helpers import DATA, assert_bad_input, run

tiktoken = pytest.importorskip("tiktoken")
tiktoken_load = pytest.importorskip("tiktoken.load")

END = "<|endoftext|>"
SPECIALS = [END, "<|pad|>"]
TEXTS = ["In the beginning God created the heaven and the earth.",
         "Hello world" + END + "  Ελληνικά 12345" + "<|pad|>" + "aaaa",
         END + END, ""]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("round-trips")
    path = folder / "corpus.txt"
    path.write_text((DATA / "kjv-genesis-exodus.txt").read_text()[:60_000]
                    + (DATA / "multilingual-sample.txt").read_text(encoding="utf-8"))
    return path


@pytest.fixture(scope="module")
def model(corpus):
    return bytepair.train(corpus, vocab_size=700, special_tokens=SPECIALS, pretokenize="cl100k")


# -- tiktoken: special tokens ---------------------------------------------------------------

def test_tiktoken_export_writes_special_tokens_beside_the_ranks(model, tmp_path):
    path = tmp_path / "tok.tiktoken"
    bytepair.to_tiktoken(model, path)
    sidecar = tiktoken_special_tokens_path(path)
    assert sidecar == str(path) + ".special_tokens.json"
    assert json.loads(Path(sidecar).read_text(encoding="utf-8")) == model.special_tokens
    assert len(path.read_text().splitlines()) == model.vocab_size - len(SPECIALS)


@pytest.mark.parametrize("given", ["path", "dict", "list"])
def test_tiktoken_round_trip_keeps_special_token_ids(model, tmp_path, given, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken caches files by their name
    path = tmp_path / "tok.tiktoken"
    bytepair.to_tiktoken(model, path)
    sidecar = tiktoken_special_tokens_path(path)
    special = {"path": sidecar, "dict": dict(model.special_tokens), "list": SPECIALS}[given]
    back = bytepair.load(path, pattern="cl100k", special_tokens=special)
    assert back.special_tokens == model.special_tokens
    # tiktoken, given the same two files, as its users load them.
    encoding = tiktoken.Encoding(
        "mine", pat_str=tiktoken_pattern(model.pattern),
        mergeable_ranks=tiktoken_load.load_tiktoken_bpe(str(path)),
        special_tokens=json.loads(Path(sidecar).read_text(encoding="utf-8")))
    for text in TEXTS:
        ids = model.encode(text, allowed_special="all")
        assert back.encode(text, allowed_special="all") == ids
        assert encoding.encode(text, allowed_special="all") == ids
        assert back.decode(ids) == text


def test_tiktoken_special_token_ids_with_a_gap_are_refused(model, tmp_path):
    path = tmp_path / "tok.tiktoken"
    bytepair.to_tiktoken(model, path)
    first = model.vocab_size - len(SPECIALS)
    with pytest.raises(bytepair.ModelFormatError, match="without gaps"):
        bytepair.load(path, pattern="cl100k", special_tokens={END: first + 5})


def test_special_tokens_for_a_file_that_is_not_tiktoken_are_refused(model, tmp_path):
    path = tmp_path / "tok.json"
    model.save(path)
    with pytest.raises(bytepair.ModelFormatError, match="special_tokens: only a tiktoken"):
        bytepair.load(path, special_tokens=[END])


def test_export_without_special_tokens_removes_a_stale_special_tokens_file(model, tmp_path):
    path = tmp_path / "tok.tiktoken"
    bytepair.to_tiktoken(model, path)
    bytepair.to_tiktoken(model.model, path)  # the bare model: no special tokens
    assert not (tmp_path / "tok.tiktoken.special_tokens.json").exists()


def test_command_line_tiktoken_round_trip_with_special(model, tmp_path, capsys):
    source = tmp_path / "tok.json"
    model.save(source)
    ranks = tmp_path / "tok.tiktoken"
    code, _, err = run(capsys, "export", source, "--to", "tiktoken", "-o", ranks)
    assert code == 0, err
    assert "tok.tiktoken.special_tokens.json" in err
    text = TEXTS[1]
    expected = " ".join(map(str, model.encode(text, allowed_special="all")))
    for special in ([str(ranks) + ".special_tokens.json"], SPECIALS):
        options = [item for token in special for item in ("--special", token)]
        code, out, err = run(capsys, "encode", ranks, "--pattern", "cl100k_base", *options, text,
                             "--allow-special")
        assert (code, out.strip()) == (0, expected), err
    # Without them the ranks file has no special tokens: their text is ordinary text.
    code, out, err = run(capsys, "encode", ranks, "--pattern", "cl100k", text, "--allow-special")
    assert code == 0 and str(model.special_tokens[END]) not in out.split()


def test_command_line_special_file_must_exist(model, tmp_path, capsys):
    ranks = tmp_path / "tok.tiktoken"
    bytepair.to_tiktoken(model, ranks)
    assert_bad_input(capsys, tmp_path, ["encode", ranks, "--pattern", "cl100k", "--special",
                                        tmp_path / "missing.json", "a"], "--special", "missing.json")


# -- transformers directories: every command that takes a model -----------------------------

@pytest.fixture(scope="module")
def folders(model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hf")
    single = folder / "tok.json"
    model.save(single)
    directory = folder / "hfdir"
    bytepair.to_transformers(model, directory)
    return folder, single, directory


def test_load_reads_a_transformers_directory(model, folders):
    _, _, directory = folders
    back = bytepair.load(directory)
    assert back.special_tokens == model.special_tokens
    for text in TEXTS:
        assert back.encode(text, allowed_special="all") == model.encode(text, allowed_special="all")
    assert [(m.left, m.right) for m in back.merges] == [(m.left, m.right) for m in model.merges]


def _same_on_directory(capsys, directory, argv_of):
    """A command gives the same output and exit code on the directory as on its tokenizer.json."""
    outputs = []
    for model in (directory, directory / "tokenizer.json"):
        code, out, err = run(capsys, *argv_of(model))
        assert code == 0, err
        outputs.append(out.replace(str(model), "MODEL"))
    assert outputs[0] == outputs[1]
    return outputs[0]


def test_encode_and_decode_take_a_directory(model, folders, capsys):
    _, _, directory = folders
    out = _same_on_directory(capsys, directory,
                             lambda m: ["encode", m, TEXTS[1], "--allow-special"])
    assert [int(i) for i in out.split()] == model.encode(TEXTS[1], allowed_special="all")
    out = _same_on_directory(capsys, directory, lambda m: ["decode", m, *out.split()])
    assert out.rstrip("\n") == TEXTS[1]


def test_inspect_and_vocab_take_a_directory(folders, capsys):
    _, _, directory = folders
    assert "special" in _same_on_directory(capsys, directory, lambda m: ["inspect", m])
    assert END in _same_on_directory(capsys, directory, lambda m: ["vocab", m])


def test_evaluate_takes_a_directory(folders, corpus, capsys):
    _, _, directory = folders
    out = _same_on_directory(capsys, directory, lambda m: ["evaluate", m, "--sample", corpus])
    assert "MODEL" in out


@pytest.mark.parametrize("to", ["tokenizers", "tiktoken", "transformers"])
def test_export_takes_a_directory(folders, tmp_path, capsys, to):
    _, single, directory = folders
    code, _, err = run(capsys, "export", directory, "--to", to, "-o", tmp_path / "a", "-q")
    assert code == 0, err
    code, _, err = run(capsys, "export", single, "--to", to, "-o", tmp_path / "b", "-q")
    assert code == 0, err
    a, b = tmp_path / "a", tmp_path / "b"
    if to == "transformers":
        a, b = a / "tokenizer.json", b / "tokenizer.json"
    assert a.read_bytes() == b.read_bytes()


def test_train_init_takes_a_directory(folders, corpus, tmp_path, capsys):
    _, single, directory = folders
    for name, init in (("a.json", directory), ("b.json", single)):
        code, _, err = run(capsys, "train", corpus, "--init", init, "--pretokenize", "cl100k",
                           "--vocab-size", "760", "-o", tmp_path / name, "-q")
        assert code == 0, err
    pairs = [[(m.left, m.right) for m in bytepair.load(tmp_path / name).merges]
             for name in ("a.json", "b.json")]
    assert pairs[0] == pairs[1]
    scratch = bytepair.train(corpus, vocab_size=760, special_tokens=SPECIALS, pretokenize="cl100k")
    assert pairs[0] == [(m.left, m.right) for m in scratch.merges]


def test_a_directory_without_a_tokenizer_is_one_line(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_bad_input(capsys, tmp_path, ["encode", empty, "a"], "directory without a tokenizer.json")
