"""The .model file: SentencePieceProcessor loads it; it equals spm_train's; bytepair.load reads it and encodes alike."""

from __future__ import annotations

import pytest

spm = pytest.importorskip("sentencepiece")

import bytepair  # noqa: E402
from bytepair.formats.load import ModelFormatError  # noqa: E402
from bytepair.formats.spm_file import save_sentencepiece  # noqa: E402
from bytepair.training.sentencepiece import train_sentencepiece  # noqa: E402
from spm_helpers import DATA, LLAMA, spm_model, write_lines  # noqa: E402

CONFIGS = {"defaults": {}, "llama2": LLAMA}


def _lines(name: str, start: int, count: int) -> list[bytes]:
    return (DATA / name).read_bytes().split(b"\n")[start:start + count]


@pytest.fixture(scope="module", params=list(CONFIGS))
def trained(request, tmp_path_factory):
    """(bytepair's model file, spm_train's ModelProto, held-out lines) for one configuration."""
    folder = tmp_path_factory.mktemp("spm")
    lines = _lines("multilingual-sample.txt", 0, 400) + _lines("kjv-genesis-exodus.txt", 0, 1500)
    options = dict(CONFIGS[request.param], vocab_size=3000)
    corpus = write_lines(lines, str(folder))
    model = train_sentencepiece(corpus, **options)
    path = folder / "m.model"
    save_sentencepiece(model, path)
    held_out = _lines("multilingual-sample.txt", 400, 200) + _lines("debian-non-english-sample.txt", 0, 200)
    return path, spm_model(lines, **options), held_out


def test_model_file_equals_spm_trains(trained):
    path, expected, _ = trained
    ours = spm.SentencePieceProcessor(model_file=str(path))
    assert ours.vocab_size() == len(expected.pieces)
    from sentencepiece import sentencepiece_model_pb2 as pb2

    proto = pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    assert [(p.piece, p.score, p.type) for p in proto.pieces] == \
        [(p.piece, p.score, p.type) for p in expected.pieces]
    assert proto.normalizer_spec == expected.normalizer_spec
    assert proto.trainer_spec.model_type == expected.trainer_spec.model_type
    assert proto.trainer_spec.byte_fallback == expected.trainer_spec.byte_fallback


def test_load_encodes_and_decodes_as_sentencepiece(trained):
    path, _, held_out = trained
    processor = spm.SentencePieceProcessor(model_file=str(path))
    model = bytepair.load(path)
    for line in held_out:
        text = line.decode("utf-8")
        ids = model.encode(text)
        assert ids == processor.encode(text), text
        assert model.decode(ids) == processor.decode(ids), text


@pytest.mark.parametrize("kind", ["unigram", "char", "word"])
def test_other_model_types_are_refused_in_one_line(kind, tmp_path):
    lines = _lines("kjv-genesis-exodus.txt", 0, 300)
    corpus = write_lines(lines, str(tmp_path))
    with open("/dev/null", "w") as quiet:
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=str(tmp_path / "o"), model_type=kind,
                                       vocab_size=200 if kind != "char" else 60, logstream=quiet)
    with pytest.raises(ModelFormatError, match=f"sentencepiece model of type {kind}, which bytepair "
                                               f"does not read") as caught:
        bytepair.load(tmp_path / "o.model")
    assert "\n" not in str(caught.value)
