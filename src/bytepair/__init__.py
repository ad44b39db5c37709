"""bytepair: exact, deterministic and fast byte-pair-encoding training.

Byte mode learns rules over the 256 byte tokens (:func:`train_bytes`); word
mode learns rules over string symbols from word counts (:func:`learn_bpe`,
:func:`train_words`, :func:`encode`); :func:`train` builds a full tokenizer
(pre-tokenizer, special tokens, exports) from files, and :func:`count`
makes the piece-count tables (:class:`PieceCounts`) it learns from, which can
be counted shard by shard, on other machines or on a Dask cluster, and added.
:class:`TrainSpec` holds :func:`train`'s options as objects (with their groups,
:class:`ReadOptions` and the others), and :func:`trainer_for` the trainer that fits it.
"""

# Not imported from typing, which alone would cost more than the rest of this file;
# type checkers read this spelling the same way.
TYPE_CHECKING = False

#: Where each public name lives, in pipeline order: the errors, documents, counts, rules,
#: models, files, evaluation, then the entry points. The stages are imported
#: at first use, so ``import bytepair`` (and ``bytepair --help``) stays cheap.
_HOMES = {
    "InputError": "bytepair._util.errors",
    "ArgumentError": "bytepair._util.errors",
    "Files": "bytepair.read.corpus",
    "CountsFormatError": "bytepair.counts.piece_counts",
    "PieceCounts": "bytepair.counts.piece_counts",
    "MemoryLimitError": "bytepair.learn.budget",
    "Merge": "bytepair.learn.rules",
    "ByteModel": "bytepair.model.models",
    "WordModel": "bytepair.model.models",
    "Tokenizer": "bytepair.model.tokenizer",
    "tiktoken_encoding": "bytepair.formats.export",
    "tiktoken_pattern": "bytepair.formats.export",
    "tiktoken_ranks": "bytepair.formats.export",
    "to_tiktoken": "bytepair.formats.export",
    "to_tokenizers_json": "bytepair.formats.export",
    "ModelFormatError": "bytepair.formats.load",
    "load": "bytepair.formats.load",
    "to_transformers": "bytepair.formats.transformers_dir",
    "Extension": "bytepair.formats.extended",
    "Evaluation": "bytepair.evaluation.report",
    "evaluate": "bytepair.evaluation.report",
    "CheckpointOptions": "bytepair.training.spec",
    "CountOptions": "bytepair.training.spec",
    "ParityOptions": "bytepair.training.spec",
    "ReadOptions": "bytepair.training.spec",
    "SuperBPEOptions": "bytepair.training.spec",
    "TrainSpec": "bytepair.training.spec",
    "count": "bytepair.training",
    "encode": "bytepair.training",
    "extend": "bytepair.training.extend",
    "learn_bpe": "bytepair.training",
    "learn_words": "bytepair.training",
    "train": "bytepair.training",
    "train_bytes": "bytepair.training",
    "train_words": "bytepair.training",
    "trainer_for": "bytepair.training",
    "SentencePieceModel": "bytepair.model.spm_model",
    "save_sentencepiece": "bytepair.formats.spm_file",
    "export_sentencepiece": "bytepair.formats.spm_export",
    "train_sentencepiece": "bytepair.training.sentencepiece",
    "count_sentencepiece": "bytepair.training.sentencepiece",
    "extend_sentencepiece": "bytepair.training.spm_extend",
}

if TYPE_CHECKING:  # what static tools and IDEs see
    from bytepair._util.errors import ArgumentError, InputError
    from bytepair.counts.piece_counts import CountsFormatError, PieceCounts
    from bytepair.evaluation.report import Evaluation, evaluate
    from bytepair.formats.export import (tiktoken_encoding, tiktoken_pattern, tiktoken_ranks,
                                         to_tiktoken, to_tokenizers_json)
    from bytepair.formats.load import ModelFormatError, load
    from bytepair.formats.transformers_dir import to_transformers
    from bytepair.formats.extended import Extension
    from bytepair.training.extend import extend
    from bytepair.learn.budget import MemoryLimitError
    from bytepair.learn.rules import Merge
    from bytepair.model.models import ByteModel, WordModel
    from bytepair.model.tokenizer import Tokenizer
    from bytepair.read.corpus import Files
    from bytepair.training import (count, encode, learn_bpe, learn_words, train, train_bytes,
                                   train_words, trainer_for)
    from bytepair.training.spec import (CheckpointOptions, CountOptions, ParityOptions,
                                        ReadOptions, SuperBPEOptions, TrainSpec)
    from bytepair.model.spm_model import SentencePieceModel
    from bytepair.formats.spm_file import save_sentencepiece
    from bytepair.formats.spm_export import export_sentencepiece
    from bytepair.training.sentencepiece import count_sentencepiece, train_sentencepiece
    from bytepair.training.spm_extend import extend_sentencepiece


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'bytepair' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


__all__ = [
    "ArgumentError",
    "ByteModel",
    "CheckpointOptions",
    "CountOptions",
    "CountsFormatError",
    "Evaluation",
    "Extension",
    "Files",
    "InputError",
    "MemoryLimitError",
    "Merge",
    "ModelFormatError",
    "ParityOptions",
    "PieceCounts",
    "ReadOptions",
    "SuperBPEOptions",
    "Tokenizer",
    "TrainSpec",
    "WordModel",
    "count",
    "count_sentencepiece",
    "encode",
    "evaluate",
    "extend",
    "learn_bpe",
    "learn_words",
    "load",
    "tiktoken_encoding",
    "tiktoken_pattern",
    "tiktoken_ranks",
    "to_tiktoken",
    "to_tokenizers_json",
    "to_transformers",
    "train",
    "train_bytes",
    "train_words",
    "trainer_for",
    "SentencePieceModel",
    "save_sentencepiece",
    "train_sentencepiece",
    "export_sentencepiece",
    "extend_sentencepiece",
]
__version__ = "0.1.0"
