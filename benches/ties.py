"""Hugging Face's tie order: bytepair ``ties="tokenizers"`` against BpeTrainer and gigabpe.

    python -m benches.ties --size 100MB --vocab-size 32768
    python -m benches.ties --size 10MB --runs 2 --no-save

Each trainer learns byte-level BPE with GPT-2's split on the English
benchmark corpus of ``--size`` (``python -m benches.corpus``), one sequence
per line, in a fresh process; the runs go back to back, in turn, ``--runs``
rounds. Each process reports the seconds of its training call and, from the
kernel, its peak RSS (``ru_maxrss`` of the reaped child: the process with all
its threads), and writes the tokenizer it made.

* ``bytepair``: ``bytepair.train(path, vocab_size=V, pretokenize="gpt2",
  per_line=True, ties="tokenizers", workers=T)``, then its ``tokenizer.json``
  export (timed with the training: it is what a user needs).
* ``tokenizers``: ``BpeTrainer(vocab_size=V,
  initial_alphabet=ByteLevel.alphabet())`` with
  ``ByteLevel(add_prefix_space=False)``, ``Tokenizer.train([path])`` (its own
  file reader, a line with its line end; the corpus has no line that ends in
  white space, so that is bytepair's per-line reading), ``RAYON_NUM_THREADS=T``.
* ``gigabpe``: ``gigabpe.train_bpe([path], A + V - 256, pretokenizer="bytelevel",
  threads=T)``. It has no ``initial_alphabet``: it starts from the A distinct
  bytes of the corpus (counted untimed), as BpeTrainer does without one.

The checks: bytepair's ``model`` section (vocabulary with IDs, merges, in
file order) and added tokens equal BpeTrainer's; gigabpe's merges equal
BpeTrainer's, and its vocabulary equals BpeTrainer's renumbered for an
alphabet of the corpus's bytes only (what BpeTrainer without
``initial_alphabet`` would write). Results: ``benches/results/ties-<size>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from . import corpus as corpora
from .harness import ROOT, machine_info, save_result

TRAINERS = ("bytepair", "gigabpe", "tokenizers")


def _train(name: str, path: str, vocab_size: int, threads: int, out: str) -> None:
    """In the worker process: train, write ``{"model": ..., "added_tokens": ...}`` to ``out``."""
    if name == "bytepair":
        import bytepair
        from bytepair.formats.export import tokenizers_json

        started = time.perf_counter()
        tok = bytepair.train(path, vocab_size=vocab_size, pretokenize="gpt2", per_line=True,
                             ties="tokenizers", workers=threads, progress=False)
        trained = time.perf_counter() - started
        data = tokenizers_json(tok)
        seconds = time.perf_counter() - started
        data["train_seconds"] = trained
    elif name == "tokenizers":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        started = time.perf_counter()
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tok.train([path], trainer)
        data = json.loads(tok.to_str())
        seconds = time.perf_counter() - started
    elif name == "gigabpe":
        import gigabpe

        alphabet = len(set(Path(path).read_bytes()))  # untimed: see the module's docstring
        started = time.perf_counter()
        vocab, merges = gigabpe.train_bpe([path], alphabet + vocab_size - 256,
                                          pretokenizer="bytelevel", threads=threads,
                                          special_tokens=[])
        seconds = time.perf_counter() - started
        data = {"model": {"vocab": vocab, "merges": [list(pair) for pair in merges]},
                "added_tokens": [], "alphabet": alphabet}
    else:
        raise SystemExit(f"unknown trainer {name!r}")
    data["seconds"] = seconds
    Path(out).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def run(name: str, path: Path, vocab_size: int, threads: int, workdir: Path) -> dict:
    """One fresh process: its training seconds, wall seconds and peak RSS (MiB)."""
    out = workdir / f"{name}.json"
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "benches.ties", "--worker", name, str(path),
                             str(vocab_size), str(threads), str(out)], cwd=ROOT, env=env)
    # wait4 gives the child's own peak RSS; the Popen is told it has ended.
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed (exit code {proc.returncode})")
    data = json.loads(out.read_text(encoding="utf-8"))
    extra = {"train_seconds": round(data.pop("train_seconds"), 3)} if "train_seconds" in data else {}
    return dict(trainer=name, seconds=round(data.pop("seconds"), 3), **extra, wall=round(wall, 3),
                peak_rss_mib=round(usage.ru_maxrss / 1024, 1), load=os.getloadavg()[0]), data


def compare(files: dict) -> dict:
    """Which outputs are identical to BpeTrainer's (without it: bytepair's merges to gigabpe's)."""
    if "tokenizers" not in files:
        if not {"bytepair", "gigabpe"} <= set(files):
            return {}
        return {"bytepair_merges_identical_to_gigabpe":
                files["bytepair"]["model"]["merges"] == files["gigabpe"]["model"]["merges"]}
    theirs = files["tokenizers"]
    out = {}
    if "bytepair" in files:
        ours = files["bytepair"]
        out["bytepair_model_identical"] = (
            json.dumps(ours["model"], ensure_ascii=False)
            == json.dumps(theirs["model"], ensure_ascii=False))
        out["bytepair_added_tokens_identical"] = ours["added_tokens"] == theirs["added_tokens"]
    if "gigabpe" in files:
        giga = files["gigabpe"]
        out["gigabpe_merges_identical"] = giga["model"]["merges"] == theirs["model"]["merges"]
        # BpeTrainer without initial_alphabet: the characters it saw, sorted, then the merges.
        merges = theirs["model"]["merges"]
        seen = sorted({c for left, right in merges for c in left + right}
                      | {c for c in giga["model"]["vocab"] if len(c) == 1})
        expected = {c: i for i, c in enumerate(seen)}
        for left, right in merges:
            expected.setdefault(left + right, len(expected))
        out["gigabpe_vocab_identical_to_bpe_trainer_without_initial_alphabet"] = (
            giga["model"]["vocab"] == expected)
        out["gigabpe_alphabet"] = giga["alphabet"]
        differ = [i for i, (a, b) in enumerate(zip(giga["model"]["merges"], merges)) if a != b]
        out["gigabpe_first_differing_merge"] = differ[0] if differ else None
        out["gigabpe_merges"] = len(giga["model"]["merges"])
    out["bpe_trainer_merges"] = len(theirs["model"]["merges"])
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benches.ties", description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="100MB", help="English corpus size (benches.corpus)")
    parser.add_argument("--corpus", default=None, help="a text file instead of the English recipe")
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=1, help="rounds of all trainers, in turn")
    parser.add_argument("--trainers", default=",".join(TRAINERS),
                        help="comma-separated, run in this order (default: all three)")
    parser.add_argument("--no-save", action="store_true", help="print only")
    parser.add_argument("--name", default=None, help="results file name (default ties-SIZE)")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpora.apply_fetch_option(args)
    path = corpora.corpus_path(args.size, args.corpus)
    names = args.trainers.split(",")
    if not set(names) <= set(TRAINERS):
        raise SystemExit(f"--trainers: from {', '.join(TRAINERS)}")
    runs, files = [], {}
    with tempfile.TemporaryDirectory(prefix="bytepair-ties-") as tmp:
        for round_ in range(args.runs):
            for name in names:
                result, data = run(name, path, args.vocab_size, args.threads, Path(tmp))
                result["round"] = round_
                runs.append(result)
                files[name] = data
                print(f"{name}: {result['seconds']:.2f} s, {result['peak_rss_mib']:.0f} MiB "
                      f"(load {result['load']:.2f})", file=sys.stderr, flush=True)
    best = {name: min(r["seconds"] for r in runs if r["trainer"] == name) for name in names}
    peak = {name: max(r["peak_rss_mib"] for r in runs if r["trainer"] == name) for name in names}
    result = dict(
        command="python -m benches.ties " + " ".join(argv if argv is not None else sys.argv[1:]),
        corpus=str(path), corpus_bytes=path.stat().st_size, vocab_size=args.vocab_size,
        threads=args.threads, runs=runs, best_seconds=best, peak_rss_mib=peak,
        ratios={f"bytepair/{n}": round(best["bytepair"] / best[n], 3)
                for n in names if n != "bytepair" and "bytepair" in best},
        identity=compare(files), machine=machine_info([]),
        versions={n: metadata.version(n) for n in ("bytepair", "tokenizers", "gigabpe")},
        date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    save_result(result, args.name or f"ties-{args.size}", write=not args.no_save)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _train(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    else:
        main()
