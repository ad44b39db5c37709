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

Everything is imported at first use: ``bytepair count`` needs none of the trainers.
"""

#: Where each name lives (a module of this package); all are imported at first use, so that
#: counting does not import the trainers, nor training the course's entry points.
_HOMES = {"DEFAULT_PATTERN": "defaults", "count": "counting", "learn": "api", "train": "api",
          "trainer_for": "api", "encode": "in_memory", "learn_bpe": "in_memory",
          "learn_words": "in_memory", "train_bytes": "in_memory", "train_words": "in_memory",
          "CheckpointOptions": "spec", "CountOptions": "spec", "ReadOptions": "spec",
          "SuperBPEOptions": "spec", "TrainSpec": "spec", "ParityOptions": "spec",
          "Trainer": "trainer", "SuperBPETrainer": "superbpe", "ParityAwareTrainer": "parity"}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'bytepair.training' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"bytepair.training.{home}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


__all__ = ["CheckpointOptions", "CountOptions", "DEFAULT_PATTERN", "ParityAwareTrainer",
           "ParityOptions", "ReadOptions",
           "SuperBPEOptions", "SuperBPETrainer", "TrainSpec", "Trainer", "count", "encode",
           "learn", "learn_bpe", "learn_words", "train", "train_bytes", "train_words", "trainer_for"]
