"""``bytepair train --superbpe``: the library's SuperBPE tokenizer, and every command on it."""

import json

import pytest

import bytepair
from helpers import KJV, assert_bad_input, run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli-superbpe") / "verses.txt"
    path.write_text("\n".join(KJV.read_text(encoding="utf-8").splitlines()[:300]) + "\n",
                    encoding="utf-8")
    return path


def test_train_writes_the_model_the_api_trains(tmp_path, capsys, corpus):
    out = tmp_path / "m.json"
    code, _, err = run(capsys, "train", corpus, "--per-line", "--vocab-size", 700, "--superbpe", 500,
                       "--max-words", 3, "--special", "<|end|>", "-o", out)
    assert code == 0, err
    want = bytepair.train(bytepair.Files(corpus, per_line=True), vocab_size=700, superbpe=500,
                          max_words=3, special_tokens=["<|end|>"], progress=False)
    assert bytepair.load(out) == want
    assert bytepair.load(out).model.stages == want.model.stages


def test_several_sizes_and_continuing(tmp_path, capsys, corpus):
    code, _, err = run(capsys, "train", corpus, "--per-line", "--vocab-size", "600,700",
                       "--superbpe", 500, "-o", tmp_path / "m{vocab_size}.json")
    assert code == 0, err
    big = bytepair.load(tmp_path / "m700.json")
    assert bytepair.load(tmp_path / "m600.json") == big.truncate(600)
    # --init with a SuperBPE model continues stage 2 with its settings.
    code, _, err = run(capsys, "train", corpus, "--per-line", "--vocab-size", 700,
                       "--init", tmp_path / "m600.json", "-o", tmp_path / "c.json")
    assert code == 0, err
    assert bytepair.load(tmp_path / "c.json") == big


def test_inspect_vocab_encode_decode_export(tmp_path, capsys, corpus):
    model = tmp_path / "m.json"
    assert run(capsys, "train", corpus, "--per-line", "--vocab-size", 700, "--superbpe", 500,
               "-q", "-o", model)[0] == 0
    tok = bytepair.load(model)
    code, out, _ = run(capsys, "inspect", model)
    assert code == 0
    assert "pattern: superbpe" in out
    assert "superbpe: stage 1 to vocabulary 500 with gpt2, then tokens of up to 4 words" in out
    assert run(capsys, "vocab", model)[0] == 0
    text = "And God said, Let there be light: and there was light."
    code, out, _ = run(capsys, "encode", model, text)
    assert code == 0
    ids = [int(x) for x in out.split()]
    assert ids == tok.encode(text)
    code, out, _ = run(capsys, "decode", model, *ids)
    assert code == 0 and out.rstrip("\n") == text
    for target in ("tokenizers", "tiktoken"):
        code, _, err = run(capsys, "export", model, "--to", target, "-o", tmp_path / target)
        assert code == 0, err
    spec = json.loads((tmp_path / "tokenizers").read_text(encoding="utf-8"))
    assert spec["pre_tokenizer"]["pretokenizers"][0]["behavior"] == "Isolated"


@pytest.mark.parametrize("options, words", [
    (["--vocab-size", 500, "--superbpe", 500], ["--superbpe", "must be smaller"]),
    (["--vocab-size", 500, "--superbpe", 200], ["--superbpe", ">= 256"]),
    (["--vocab-size", 500, "--superbpe", 300, "--max-words", 0], ["--max-words", ">= 1"]),
    (["--vocab-size", 500, "--superbpe", 300, "--superbpe-pretokenize", r"\d*"],
     ["--superbpe-pretokenize", "empty string"]),
    (["--vocab-size", 500, "--superbpe", 300, "--pretokenize", "none"],
     ["--superbpe", "byte mode"]),
    (["--vocab-size", 500, "--max-words", 3], ["--max-words", "without --superbpe"]),
])
def test_bad_input_is_one_line(tmp_path, capsys, corpus, options, words):
    assert_bad_input(capsys, tmp_path, ["train", corpus, *options, "-o", tmp_path / "m.json"], *words)
