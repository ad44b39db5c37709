"""The training stage: what to train (:class:`TrainSpec`), who trains (:class:`Trainer`,
:class:`SuperBPETrainer`, :class:`ParityAwareTrainer`) and the public entry points built on them.

* :mod:`~bytepair.training.spec`: the spec and its option groups, checked once;
* :mod:`~bytepair.training.counting`: reading and counting as a run asks (:func:`count`);
* :mod:`~bytepair.training.trainer`: the byte-mode trainer and its verbs;
* :mod:`~bytepair.training.superbpe`: the SuperBPE trainer;
* :mod:`~bytepair.training.parity`: the parity-aware trainer;
* :mod:`~bytepair.training.api`: :func:`train`, :func:`learn` and :func:`trainer_for` (which
  trainer fits a spec);
* :mod:`~bytepair.training.in_memory`: the course's entry points on data held in memory.

The spec and the trainers are imported at first use: their dataclasses cost import time.
"""

from bytepair.training.defaults import DEFAULT_PATTERN
from bytepair.training.counting import count
from bytepair.training.api import learn, train, trainer_for
from bytepair.training.in_memory import encode, learn_bpe, learn_words, train_bytes, train_words

_LAZY = {"CheckpointOptions": "spec", "CountOptions": "spec", "ReadOptions": "spec",
         "SuperBPEOptions": "spec", "TrainSpec": "spec", "Trainer": "trainer",
         "SuperBPETrainer": "superbpe", "ParityOptions": "spec", "ParityAwareTrainer": "parity"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"bytepair.training.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'bytepair.training' has no attribute {name!r}")


__all__ = ["CheckpointOptions", "CountOptions", "DEFAULT_PATTERN", "ParityAwareTrainer",
           "ParityOptions", "ReadOptions",
           "SuperBPEOptions", "SuperBPETrainer", "TrainSpec", "Trainer", "count", "encode",
           "learn", "learn_bpe", "learn_words", "train", "train_bytes", "train_words", "trainer_for"]
