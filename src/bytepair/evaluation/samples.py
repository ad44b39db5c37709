"""Held-out samples: where their texts come from, read in batches for the encoder.

A whole-file document is read in blocks that end at cut points
(:mod:`bytepair.read.blocks`) when every model splits with a pattern that may
be cut there: encoding the blocks gives the same IDs as encoding the file
whole, and the encoder's threads get several texts to share.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterator

from bytepair._util.errors import ArgumentError
from bytepair.read.corpus import Files, files_named

#: Characters handed to the encoder at a time (its threads split them).
BATCH_CHARS = 1 << 24
#: Bytes per block of a whole-file document: small enough that a batch holds many.
BLOCK_BYTES = 1 << 20


@dataclass
class Sample:
    """A held-out sample: a name, its texts or files, and whether the name is a label.

    ``sources`` holds paths (globs and directories as :class:`bytepair.Files`
    reads them), :class:`bytepair.Files` objects, or lists of str texts.
    Labelled samples (languages, domains) are compared with each other:
    parity and the Gini coefficient. ``per_line`` reads plain text files
    given as paths one document per line.
    """

    name: str
    sources: list = field(default_factory=list)
    labelled: bool = False
    per_line: bool = False


def samples_of(samples, per_line: bool = False) -> list[Sample]:
    """``evaluate``'s ``samples`` argument as :class:`Sample` objects.

    A mapping ``{label: source}`` gives labelled samples; a list of paths
    gives one unlabelled sample per path, named by it; Sample objects pass.
    """
    if isinstance(samples, (str, os.PathLike, Files)):
        samples = [samples]
    if isinstance(samples, dict):
        if not samples:
            raise ArgumentError("samples", ": no samples given")
        out = []
        for label, source in samples.items():
            if not isinstance(label, str) or not label:
                raise TypeError(f"samples: a label must be a non-empty str, got {label!r}")
            out.append(Sample(label, [_checked_source(source, label)], True, per_line))
        return [_resolved(sample) for sample in out]
    try:
        items = list(samples)
    except TypeError:
        raise TypeError("samples must be a mapping {label: path or texts}, or a list of paths, "
                        f"got {type(samples).__name__}") from None
    if not items:
        raise ArgumentError("samples", ": no samples given")
    out = []
    for index, item in enumerate(items):
        if isinstance(item, Sample):
            out.append(item)
        elif isinstance(item, (str, os.PathLike)):
            out.append(Sample(os.fspath(item), [_checked_source(item, f"samples[{index}]")],
                              False, per_line))
        else:
            raise TypeError(f"samples[{index}] must be a path (str) or a Sample, got "
                            f"{type(item).__name__}; give texts as a mapping {{label: texts}}")
    return [_resolved(sample) for sample in out]


def _resolved(sample: Sample) -> Sample:
    """``sample`` with its paths found now, so that a missing file fails before any
    model runs, with a message naming the sample."""
    sources = [files_named(f"samples[{sample.name!r}]", source, per_line=sample.per_line)
               if isinstance(source, (str, os.PathLike)) else source
               for source in sample.sources]
    return Sample(sample.name, sources, sample.labelled, sample.per_line)


def _checked_source(source, name: str):
    if isinstance(source, (str, os.PathLike, Files)):
        return source
    if isinstance(source, (list, tuple)):
        for index, text in enumerate(source):
            if not isinstance(text, str):
                raise TypeError(f"samples[{name!r}][{index}] must be a str, got {type(text).__name__}")
        return list(source)
    raise TypeError(f"samples[{name!r}] must be a path, a Files or a list of str, "
                    f"got {type(source).__name__}")


def batches(sample: Sample, cuttable: bool) -> Iterator[tuple[list[str], int]]:
    """The texts of ``sample`` in lists of about :data:`BATCH_CHARS` characters, each
    with the number of documents that start in it (a file read in blocks is one)."""
    batch: list[str] = []
    size = documents = 0
    for text, starts_document in _texts(sample, cuttable):
        batch.append(text)
        size += len(text)
        documents += starts_document
        if size >= BATCH_CHARS:
            yield batch, documents
            batch, size, documents = [], 0, 0
    if batch:
        yield batch, documents


def _texts(sample: Sample, cuttable: bool) -> Iterator[tuple[str, bool]]:
    """Each text of ``sample``, and whether it starts a document (a block after the
    first of a file does not), read by the reading stage (:meth:`Files.texts`), with
    every option the sample's :class:`Files` carries."""
    for source in sample.sources:
        if isinstance(source, list):
            for text in source:
                yield text, True
            continue
        files = source if isinstance(source, Files) else Files(source, per_line=sample.per_line)
        yield from files.texts(BLOCK_BYTES if cuttable else None)
