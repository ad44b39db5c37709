"""The training stage: what to train (:class:`TrainSpec`), who trains (:class:`Trainer`,
:class:`SuperBPETrainer`) and the public entry points built on them.

* :mod:`~bytepair.training.spec`: the spec and its option groups, checked once;
* :mod:`~bytepair.training.counting`: reading and counting as a run asks (:func:`count`);
* :mod:`~bytepair.training.trainer`: the byte-mode trainer and its verbs;
* :mod:`~bytepair.training.superbpe`: the SuperBPE trainer;
* :mod:`~bytepair.training.parity`: the parity-aware trainer;
* :mod:`~bytepair.training.api`: :func:`train` and :func:`learn`;
* :mod:`~bytepair.training.in_memory`: the course's entry points on data held in memory.
"""

from bytepair.training.spec import (DEFAULT_PATTERN, CheckpointOptions, CountOptions,
                                    ParityOptions, ReadOptions, SuperBPEOptions, TrainSpec)
from bytepair.training.counting import count
from bytepair.training.trainer import Trainer
from bytepair.training.superbpe import SuperBPETrainer
from bytepair.training.parity import ParityAwareTrainer
from bytepair.training.api import learn, train
from bytepair.training.in_memory import encode, learn_bpe, learn_words, train_bytes, train_words

__all__ = ["CheckpointOptions", "CountOptions", "DEFAULT_PATTERN", "ParityAwareTrainer",
           "ParityOptions", "ReadOptions",
           "SuperBPEOptions", "SuperBPETrainer", "TrainSpec", "Trainer", "count", "encode",
           "learn", "learn_bpe", "learn_words", "train", "train_bytes", "train_words"]
