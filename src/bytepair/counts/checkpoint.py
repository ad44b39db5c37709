"""Checkpoints: a count or a training run that can be interrupted and resumed
to the same table and the same model.

A checkpoint directory holds, each written atomically (whole or not at all):

``checkpoint.json``
    What the run is: the corpus files (path, size, modification time), the
    pattern and the reading options, and for training the options that shape
    the rules. A resumed run must match it; the error names what differs.
``units/NNNNNN.run``
    The table of each counted unit of the corpus (parts of about
    :data:`UNIT_BYTES` from :meth:`bytepair.Files.parts`), as a sorted run
    (:mod:`bytepair.counts.spill`). A unit with a run is not counted again.
``counts``
    The whole table, once every unit is counted (the runs are then removed).
``units/NNNNNN.sha256``
    The SHA-256 of the unit's run, written after it: a run that does not match its sum
    (damaged) is counted again.
``rules``
    Training only: the model learned so far (written by :mod:`bytepair.training`), a
    model file with its checksum. A rules file that does not match it is refused, never
    resumed from.

Resuming is exact: the table is a sum, the same whatever units were counted
in which run; and training from the table with the rules learned so far as
``init`` gives the rules of training from scratch (``docs/design.md``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bytepair._util.atomic import write_atomically
from bytepair.counts import counting
from bytepair.counts.piece_counts import PieceCounts, describe_pattern
from bytepair.counts.spill import (give_freed_tables_back, merge_run_files, remove_abandoned,
                                   save_table)
from bytepair.read.corpus import Files, file_of
from bytepair.split import fastsplit

FORMAT = "bytepair-checkpoint"
VERSION = 1
#: A counted unit of the corpus (one run file) covers about this many bytes: what a kill
#: can lose, and what each worker holds as one table before writing it.
UNIT_BYTES = 1 << 24


class CheckpointAhead(ValueError):
    """A resumed run asks for fewer merges than its checkpoint already holds.

    ``held`` and ``requested`` are numbers of merges; ``special`` is the
    number of special tokens, so that a caller that took a vocabulary size
    can say it in that unit. The model of the smaller size is the first rules
    of the larger one: train to the checkpoint's size (or more) and truncate.
    """

    def __init__(self, held: int, requested: int, special: int = 0):
        self.held, self.requested, self.special = held, requested, special
        super().__init__(
            f"checkpoint: it already holds {held:,} merges, more than the {requested:,} requested; "
            f"resume with {held:,} merges or more and truncate the model to the smaller size "
            f"(Tokenizer.truncate: the smaller model is the first rules of the larger)")


def corpus_identity(files: Files) -> dict:
    """The files (``[path, size, modification time in ns]`` each: a changed file is a new
    corpus), the options that read them and the unit size (units are numbered)."""
    corpus = []
    for path in files.paths:
        info = path.stat()
        corpus.append([str(path), info.st_size, getattr(info, "st_mtime_ns", None)])
    return {"corpus": corpus, "per_line": files.per_line, "jsonl_field": files.jsonl_field,
            "text_column": files.text_column, "unit_bytes": UNIT_BYTES}


def _differs(name: str, old, new) -> str:
    """What a resumed run must hear when ``name`` changed from ``old`` to ``new``."""
    if name in ("corpus", "counts") and (old is None or new is None):
        made = "files" if (name == "corpus") == (old is not None) else "count tables"
        other = "count tables" if made == "files" else "files"
        return f"the checkpoint was made from {made}, not from {other}"
    if name == "counts":
        return "the count tables differ from the checkpoint's"
    if name == "init":
        return "the init model differs from the checkpoint's"
    if name in ("languages", "dev"):  # parity-aware training: a corpus per language
        what = "training text" if name == "languages" else "dev text"
        changed = sorted(set(old or {}) ^ set(new or {})) or [
            language for language in new if old[language] != new[language]]
        return f"the {what} of {', '.join(changed)} differs from the checkpoint's"
    if name == "corpus":
        old_paths, new_paths = [f[0] for f in old], [f[0] for f in new]
        if old_paths != new_paths:
            gone = [p for p in old_paths if p not in new_paths]
            added = [p for p in new_paths if p not in old_paths]
            what = (f"{gone[0]!r} is no longer in the corpus" if gone else
                    f"{added[0]!r} was not in the corpus" if added else "the files are in another order")
            return f"the corpus files differ from the checkpoint's: {what}"
        changed = next(n for n, o in zip(new, old) if n != o)
        return f"corpus file {changed[0]!r} changed since the checkpoint (size or modification time)"
    if name == "pattern":
        return f"the checkpoint was made with pattern {describe_pattern(old)}, not {describe_pattern(new)}"
    return f"the checkpoint was made with {name} {old!r}, not {new!r}"


class Checkpoint:
    """The checkpoint directory of one run.

    ``directory``
        Where the checkpoint lives (made when missing).
    ``identity``
        What the run is (JSON-able dict); a resumed checkpoint must hold the same.
    ``resume``
        Continue the checkpoint found there. Without it, a directory that already
        holds a checkpoint is refused (so that no run is lost by mistake); with it,
        a directory without one starts a new checkpoint.
    """

    def __init__(self, directory: str | os.PathLike, identity: dict, *, resume: bool):
        remove_abandoned()  # spill files of runs killed before (this one keeps its runs here)
        self.directory = Path(directory)
        self.identity = identity
        manifest = self.directory / "checkpoint.json"
        name = repr(os.fspath(directory))
        if self.directory.exists() and not self.directory.is_dir():
            raise ValueError(f"checkpoint {name}: not a directory")
        if manifest.exists():
            if not resume:
                raise ValueError(f"checkpoint {name} already holds a checkpoint: resume it "
                                 "(--resume, resume=True) or give another directory")
            try:
                stored = json.loads(manifest.read_text("utf-8"))
                assert stored["format"] == FORMAT and stored["version"] == VERSION
                old = stored["identity"]
            except (ValueError, KeyError, TypeError, AssertionError):
                raise ValueError(f"checkpoint {name}: {str(manifest)!r} is not a checkpoint "
                                 f"this bytepair reads") from None
            for key in sorted(set(old) | set(identity)):
                if old.get(key) != identity.get(key):
                    raise ValueError(f"checkpoint {name}: {_differs(key, old.get(key), identity.get(key))}")
        else:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_atomically(manifest, json.dumps({"format": FORMAT, "version": VERSION,
                                                   "identity": identity}, indent=1) + "\n")

    @property
    def counts_path(self) -> Path:
        return self.directory / "counts"

    @property
    def rules_path(self) -> Path:
        return self.directory / "rules"

    def _unit_path(self, index: int) -> Path:
        return self.directory / "units" / f"{index:06d}.run"

    def _unit_done(self, index: int) -> bool:
        """Whether unit ``index`` has its run, whole. A run is written atomically, then its
        sum: a run without a sum (the run was stopped between the two) is whole and is
        sealed now; a run that does not match its sum (damaged since) is removed with the
        sum, to be counted again, as is a sum without a run."""
        run, sum_path = self._unit_path(index), self._unit_path(index).with_suffix(".sha256")
        if not run.exists():
            sum_path.unlink(missing_ok=True)
            return False
        if not sum_path.exists():
            self._unit_kept(index)
            return True
        try:
            done = sum_path.read_text("ascii") == _file_digest(run)
        except (OSError, UnicodeDecodeError):
            done = False
        if not done:
            for path in (run, sum_path):
                path.unlink(missing_ok=True)
        return done

    def _unit_kept(self, index: int) -> None:
        """Seal unit ``index``'s run, just written, with its sum."""
        run = self._unit_path(index)
        write_atomically(run.with_suffix(".sha256"), _file_digest(run))

    def rules(self, read):
        """The rules a run resumes from, ``read(path)`` (which loads them and checks their
        checksum), or None when no rules were written yet. A file ``read`` refuses is
        refused with the way out: delete it, and the rules are learned again from the counts."""
        if not self.rules_path.exists():
            return None
        try:
            return read(self.rules_path)
        except ValueError as exc:
            raise ValueError(f"checkpoint {os.fspath(self.directory)!r}: cannot resume from its "
                             f"rules: {exc}; delete {os.fspath(self.rules_path)!r} to learn them "
                             f"again from the counts") from None

    def counts(self) -> PieceCounts | None:
        """The whole table, when a run got that far (else None)."""
        return PieceCounts.load(self.counts_path) if self.counts_path.exists() else None

    def save_counts(self, table: PieceCounts) -> None:
        """Keep the whole table; the unit runs it was merged from are no longer needed."""
        import shutil  # at first use: slow at start-up

        table.save(self.counts_path)
        shutil.rmtree(self.directory / "units", ignore_errors=True)

    def count(self, files: Files, source: str | None, *, workers: int,
              progress_bar=None) -> PieceCounts:
        """The table of ``files``: the units not counted yet are counted on ``workers``
        threads (compiled counting releases the GIL), each kept as a run as soon as
        it is done; then every run is merged. Memory: one unit's table per worker,
        then the merged table.
        """
        give_freed_tables_back()  # every unit's table is freed after its run is written
        cut = bool(counting.compiled_counter(source))  # only the named patterns have proven cut points
        units = files.parts(self.identity["unit_bytes"], cut_documents=cut)
        (self.directory / "units").mkdir(exist_ok=True)
        todo = []
        for index, unit in enumerate(units):
            if self._unit_done(index):
                if progress_bar is not None:
                    progress_bar.update(files.part_size(*unit))
            else:
                todo.append((index, unit))

        def count_unit(job) -> int:
            index, (path, start, end) = job
            table = fastsplit.table() if fastsplit.available() else None
            counts = counting.part_into(table, file_of(path), start, end, source, files.per_line,
                                         files.jsonl_field, files.text_column)
            save_table(self._unit_path(index), counts if counts is not None else table)
            self._unit_kept(index)
            return files.part_size(path, start, end)

        from concurrent.futures import ThreadPoolExecutor  # at first use, not at import

        with ThreadPoolExecutor(max(1, workers)) as pool:
            futures = [pool.submit(count_unit, job) for job in todo]
            try:
                for future in futures:
                    size = future.result()
                    if progress_bar is not None:
                        progress_bar.update(size)
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        return merge_run_files([self._unit_path(i) for i in range(len(units))], source)


def _file_digest(path: Path) -> str:
    """The SHA-256 of the file at ``path`` in hex, read in blocks."""
    import hashlib  # at first use: its OpenSSL binding is slow to import

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

