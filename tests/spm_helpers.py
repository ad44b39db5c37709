"""Shared ground of the sentencepiece tests: spm_train itself, and bytepair's pieces on the same lines."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as pb2

from bytepair.split.spm_text import SentenceText
from bytepair.training.sentencepiece import SentencePieceOptions, pieces_from_words

DATA = Path(__file__).resolve().parent / "data"
LLAMA = dict(normalization_rule_name="identity", byte_fallback=True, split_digits=True,
             allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
             character_coverage=0.99995)


def write_lines(lines: list[bytes], directory: str) -> str:
    path = Path(directory) / "corpus.txt"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return str(path)


def spm_model(lines: list[bytes], **options) -> pb2.ModelProto:
    """The ModelProto spm_train writes for ``lines`` (one thread, BPE)."""
    with tempfile.TemporaryDirectory() as directory:
        path = write_lines(lines, directory)
        prefix = str(Path(directory) / "m")
        with open("/dev/null", "w") as quiet:
            spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, model_type="bpe",
                                           num_threads=1, logstream=quiet, **options)
        proto = pb2.ModelProto()
        proto.ParseFromString(Path(prefix + ".model").read_bytes())
    return proto


def spm_pieces(lines: list[bytes], **options) -> list[tuple[str, float, int]]:
    return [(p.piece, p.score, p.type) for p in spm_model(lines, **options).pieces]


def naive_options(**options) -> dict:
    """Every option the naive reference reads, spm_train's defaults under the given ones."""
    o = SentencePieceOptions.of(**options)
    return {name: getattr(o, name) for name in o.__dataclass_fields__}


def fast_pieces(lines: list[bytes], **options) -> list[tuple[str, float, int]]:
    o = SentencePieceOptions.of(**options)
    text = SentenceText(o.text_rules())
    return pieces_from_words(dict(Counter(text.block_words(lines))), o)


def sample_lines(name: str, count: int, start: int = 0) -> list[bytes]:
    return (DATA / name).read_bytes().split(b"\n")[start:start + count]


def train_model_file(folder: Path, name: str, verses: int, multilingual: int, **options) -> str:
    """spm_train's model (``options``) of ``verses`` KJV lines and ``multilingual`` multilingual
    lines, written as ``folder/name.model``; its path."""
    lines = sample_lines("kjv-genesis-exodus.txt", verses) + sample_lines("multilingual-sample.txt",
                                                                          multilingual)
    corpus = write_lines(lines, str(folder))
    with open("/dev/null", "w") as quiet:
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=str(Path(folder) / name),
                                       num_threads=1, logstream=quiet, **options)
    return str(Path(folder) / f"{name}.model")

