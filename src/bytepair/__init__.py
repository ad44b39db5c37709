"""bytepair: exact, deterministic and fast byte-pair-encoding training.

Byte mode learns rules over the 256 byte tokens (:func:`train_bytes`); word
mode learns rules over string symbols from word counts (:func:`learn_bpe`,
:func:`train_words`, :func:`encode`); :func:`train` builds a full tokenizer
(pre-tokenizer, special tokens, exports) from files, and :func:`count`
makes the piece-count tables (:class:`PieceCounts`) it learns from, which can
be counted shard by shard, on other machines or on a Dask cluster, and added.
"""

from typing import TYPE_CHECKING

# In pipeline order: documents, counts, rules, models, files, evaluation, then the entry points.
from bytepair.read.corpus import Files
from bytepair.counts.piece_counts import CountsFormatError, PieceCounts
from bytepair.learn.budget import MemoryLimitError
from bytepair.learn.rules import Merge
from bytepair.model.models import ByteModel, WordModel
from bytepair.model.tokenizer import Tokenizer
from bytepair.formats.export import (tiktoken_encoding, tiktoken_pattern, tiktoken_ranks,
                                     to_tiktoken, to_tokenizers_json)
from bytepair.formats.load import ModelFormatError, load
from bytepair.formats.transformers_dir import to_transformers
from bytepair.training import (count, encode, learn_bpe, learn_words, train, train_bytes,
                               train_words)

if TYPE_CHECKING:
    from bytepair.evaluation.report import Evaluation, evaluate


def __getattr__(name: str):
    # Evaluation and evaluate are imported at first use: the evaluation stage's
    # dataclasses cost a fifth of the package's import time.
    if name in ("Evaluation", "evaluate"):
        from bytepair.evaluation import report

        return getattr(report, name)
    raise AttributeError(f"module 'bytepair' has no attribute {name!r}")

__all__ = [
    "ByteModel",
    "CountsFormatError",
    "Evaluation",
    "Files",
    "MemoryLimitError",
    "Merge",
    "ModelFormatError",
    "PieceCounts",
    "Tokenizer",
    "WordModel",
    "count",
    "encode",
    "evaluate",
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
]
__version__ = "0.1.0"
