"""bytepair: exact, deterministic and fast byte-pair-encoding training.

Byte mode learns rules over the 256 byte tokens (:func:`train_bytes`); word
mode learns rules over string symbols from word counts (:func:`learn_bpe`,
:func:`train_words`, :func:`encode`); :func:`train` builds a full tokenizer
(pre-tokenizer, special tokens, exports) from files, and :func:`count`
makes the piece-count tables (:class:`PieceCounts`) it learns from, which can
be counted shard by shard, on other machines or on a Dask cluster, and added.
"""

from .corpus import Files
from .export import to_tiktoken, to_tokenizers_json
from .io import ModelFormatError, load
from .model import ByteModel, WordModel
from .piece_counts import CountsFormatError, PieceCounts
from .rules import Merge
from .tokenizer import Tokenizer
from .trainers import count, encode, learn_bpe, train, train_bytes, train_words

__all__ = [
    "ByteModel",
    "CountsFormatError",
    "Files",
    "Merge",
    "ModelFormatError",
    "PieceCounts",
    "Tokenizer",
    "WordModel",
    "count",
    "encode",
    "learn_bpe",
    "load",
    "to_tiktoken",
    "to_tokenizers_json",
    "train",
    "train_bytes",
    "train_words",
]
__version__ = "0.1.0"
