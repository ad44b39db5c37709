"""From the command line to the libraries people load: the issue's end-to-end check.

Train on a few MB of real English (KJV, Leviticus to Revelation) with the
GPT-2 pattern and vocab 8192, export both ways, and check that Hugging Face
tokenizers and tiktoken give exactly bytepair's IDs on held-out text
(Genesis and Exodus, and a multilingual sample).
"""

import pytest
import tiktoken
import tiktoken.load  # the ranks-file reader is a submodule
import tokenizers

import bytepair
from bytepair.cli.main import main
from helpers import DATA


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("interop")
    model = folder / "model.json"
    code = main(["train", str(DATA / "kjv-leviticus-revelation.txt.gz"), "--vocab-size", "8192",
                 "--pretokenize", "gpt2", "--special", "<|endoftext|>", "--quiet", "-o", str(model)])
    assert code == 0
    return folder, bytepair.load(model)


def held_out() -> list[str]:
    english = (DATA / "kjv-genesis-exodus.txt").read_text()
    return [english[:100_000], (DATA / "multilingual-sample.txt").read_text(), " \n\n\t  x   ", ""]


def test_trained_to_the_requested_size(trained):
    _, tok = trained
    assert tok.vocab_size == 8192
    assert len(tok.merges) == 8192 - 256 - 1


def test_tokenizers_json_gives_bytepairs_ids(trained):
    folder, tok = trained
    path = folder / "tokenizer.json"
    assert main(["export", str(folder / "model.json"), "--to", "tokenizers", "-o", str(path)]) == 0
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in held_out() + ["in the beginning<|endoftext|>and so"]:
        ids = tok.encode(text, allowed_special="all")
        assert hf.encode(text).ids == ids
        assert hf.decode(ids, skip_special_tokens=False) == text


def test_tiktoken_gives_bytepairs_ids(trained, monkeypatch):
    from bytepair.formats.export import tiktoken_pattern

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # read the file just written, not a cache
    folder, tok = trained
    path = folder / "model.tiktoken"
    assert main(["export", str(folder / "model.json"), "--to", "tiktoken", "-o", str(path)]) == 0
    encoding = tiktoken.Encoding(
        "bytepair-kjv",
        pat_str=tiktoken_pattern(tok.pattern),
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens=tok.special_tokens,
    )
    for text in held_out() + ["in the beginning<|endoftext|>and so"]:
        ids = tok.encode(text, allowed_special="all")
        assert encoding.encode(text, allowed_special="all") == ids
        assert encoding.decode(ids) == text
