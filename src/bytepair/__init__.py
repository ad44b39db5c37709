"""bytepair: exact, deterministic and fast byte-pair-encoding training.

Byte mode learns rules over the 256 byte tokens (:func:`train_bytes`); word
mode learns rules over string symbols from word counts (:func:`learn_bpe`,
:func:`train_words`, :func:`encode`); :func:`train` builds a full tokenizer
(pre-tokenizer, special tokens, exports) from files.
"""

from .corpus import Files
from .export import to_tiktoken, to_tokenizers_json
from .io import ModelFormatError, load
from .model import ByteModel, WordModel
from .rules import Merge
from .tokenizer import Tokenizer
from .trainers import encode, learn_bpe, train, train_bytes, train_words

__all__ = [
    "ByteModel",
    "Files",
    "Merge",
    "ModelFormatError",
    "Tokenizer",
    "WordModel",
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
