"""The tokenizer.json export of a sentencepiece model: tokenizers and LlamaTokenizerFast encode as sentencepiece."""

from __future__ import annotations

import pytest

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")

from bytepair.formats.spm_export import export_sentencepiece  # noqa: E402
from bytepair.formats.spm_file import save_sentencepiece  # noqa: E402
from bytepair.training.sentencepiece import train_sentencepiece  # noqa: E402
from spm_helpers import DATA, LLAMA, write_lines  # noqa: E402


def _lines(name: str, start: int, count: int) -> list[bytes]:
    return (DATA / name).read_bytes().split(b"\n")[start:start + count]


@pytest.fixture(scope="module", params=["llama2", "defaults"])
def exported(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm-export")
    lines = _lines("multilingual-sample.txt", 0, 40) + _lines("kjv-genesis-exodus.txt", 0, 1500)
    options = dict(LLAMA if request.param == "llama2" else {}, vocab_size=2500)
    model = train_sentencepiece(write_lines(lines, str(folder)), **options)
    save_sentencepiece(model, folder / "m.model")
    export_sentencepiece(model, folder / "tokenizer.json")
    held_out = _lines("multilingual-sample.txt", 40, 22) + _lines("debian-non-english-sample.txt", 0, 150)
    return folder, [line.decode() for line in held_out if line], request.param


def test_tokenizers_encodes_as_sentencepiece(exported):
    folder, texts, _ = exported
    processor = spm.SentencePieceProcessor(model_file=str(folder / "m.model"))
    tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text in texts:
        assert tokenizer.encode(text, add_special_tokens=False).ids == processor.encode(text), text


def test_llama_tokenizer_fast_encodes_as_sentencepiece(exported):
    folder, texts, config = exported
    transformers = pytest.importorskip("transformers")
    processor = spm.SentencePieceProcessor(model_file=str(folder / "m.model"))
    fast = transformers.LlamaTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"),
                                           add_bos_token=False, legacy=False)
    for text in texts:
        assert fast.encode(text, add_special_tokens=False) == processor.encode(text), text
