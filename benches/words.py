"""Word mode against its peers: one corpus, the same words and merges, fresh processes.

    python -m benches.words --size 10MB --threads 1 --threads 2 --repeat 2
    python -m benches.words --size 100MB --trainer bytepair --trainer youtokentome

Every trainer reads the same English text, splits it into white-space-separated
words, counts them and learns ``--merges`` rules on top of the characters:

* ``bytepair``: :func:`bytepair.learn_words` with ``end_of_word="</w>"``,
  ``workers`` = threads (counting on threads; the merge loop is one thread).
* ``bytepair-sortedlist``: the same call on the pure-Python engine
  (``BYTEPAIR_BACKEND=python``), whose priority is a ``SortedList`` keyed by
  the symbols' strings: the structure the compiled engine's heap replaces,
  shown here so that the replacement is measured, not assumed.
* ``youtokentome``: ``BPE.train`` with ``n_threads``; it marks word starts
  with "▁" instead of word ends, and its vocabulary is 4 special tokens +
  the characters + the merges, so ``vocab_size`` is set to learn ``--merges`` rules.
* ``fastbpe``: the ``fast learnbpe`` command of fastBPE (``</w>``, one thread),
  compiled from its source distribution (``pip download fastBPE``) with g++.
* ``subword-nmt``: ``learn_bpe`` with ``</w>``, ``min_frequency=1``, one thread
  (``num_workers`` counts the words in processes).

Each run is a fresh process started by this one: the wall time of the
training call (``seconds``, measured inside, imports excluded), of the whole
process (``process_seconds``, Python's start and imports included), and from
``wait4`` the process's peak RSS and CPU seconds.
Trainers alternate run by run (bytepair, peers, bytepair, peers, ...), so
that a change in the machine's load hits all of them alike. The JSON written
(``-o``, default ``benches/results/words-SIZE.json``) holds every run, the
machine's load before and after, and each trainer's median and its ratio to
YouTokenToMe's median at the same thread count.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import corpus as corpora
from .peers import YTTM_SPECIALS, alphabet

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results"
TRAINERS = ("bytepair", "bytepair-sortedlist", "youtokentome", "fastbpe", "subword-nmt")


# --- the trainers, each run in a child process ------------------------------


def _bytepair(path: str, merges: int, threads: int, scratch: Path) -> int:
    import bytepair

    model = bytepair.learn_words(path, merges, end_of_word="</w>", workers=threads, progress=False)
    return len(model.merges)


def _bytepair_sortedlist(path: str, merges: int, threads: int, scratch: Path) -> int:
    # Set before the first import: the backend is read when the engines are chosen.
    os.environ["BYTEPAIR_BACKEND"] = "python"
    return _bytepair(path, merges, threads, scratch)


def _youtokentome(path: str, merges: int, threads: int, scratch: Path) -> int:
    import youtokentome

    model = scratch / "model.yttm"
    youtokentome.BPE.train(data=path, model=str(model), n_threads=threads, coverage=1.0,
                           vocab_size=YTTM_SPECIALS + alphabet(Path(path), whitespace_splits=True) + merges)
    return int(model.read_text().split("\n", 1)[0].split()[1])


def fastbpe_binary() -> Path:
    """fastBPE's command, compiled once from its source distribution into the cache."""
    binary = corpora.cache_dir() / "fastbpe" / "fast"
    if binary.exists():
        return binary
    work = Path(tempfile.mkdtemp(prefix="bench-fastbpe-"))
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                    ":all:", "fastBPE==0.1.0", "-d", str(work)], check=True)
    shutil.unpack_archive(str(next(work.glob("fastBPE-*.tar.gz"))), str(work))
    source = next(work.glob("fastBPE-*/fastBPE"))
    binary.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["g++", "-std=c++11", "-pthread", "-O3", str(source / "main.cc"),
                    f"-I{source}", "-o", str(binary)], check=True)
    return binary


def _fastbpe(path: str, merges: int, threads: int, scratch: Path) -> int:
    codes = scratch / "codes"
    with open(codes, "wb") as out:
        subprocess.run([str(fastbpe_binary()), "learnbpe", str(merges), path], stdout=out,
                       stderr=subprocess.DEVNULL, check=True)
    return sum(1 for _ in open(codes, "rb"))


def _subword_nmt(path: str, merges: int, threads: int, scratch: Path) -> int:
    from subword_nmt.learn_bpe import learn_bpe

    codes = scratch / "codes"
    with open(path, encoding="utf-8") as infile, open(codes, "w", encoding="utf-8") as outfile:
        learn_bpe(infile, outfile, merges, min_frequency=1, num_workers=threads)
    return sum(1 for line in open(codes, encoding="utf-8") if not line.startswith("#"))


RUNNERS = {"bytepair": _bytepair, "bytepair-sortedlist": _bytepair_sortedlist,
           "youtokentome": _youtokentome, "fastbpe": _fastbpe,
           "subword-nmt": _subword_nmt}
#: Trainers that learn on one thread whatever is asked.
ONE_THREAD = {"fastbpe"}


def child(trainer: str, path: str, merges: int, threads: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="bench-words-"))
    try:
        start = time.perf_counter()
        learned = RUNNERS[trainer](path, merges, threads, scratch)
        return {"seconds": time.perf_counter() - start, "learned": learned}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# --- the parent: fresh processes, back to back ------------------------------


def installed(trainer: str) -> str | None:
    """None when ``trainer`` can run here, else why not."""
    modules = {"bytepair": "bytepair", "bytepair-sortedlist": "bytepair", "youtokentome": "youtokentome",
               "subword-nmt": "subword_nmt"}
    if trainer == "fastbpe":
        if shutil.which("g++") is None:
            return "no g++ to compile fastBPE"
        try:
            fastbpe_binary()
        except (subprocess.CalledProcessError, OSError, StopIteration) as exc:
            return f"fastBPE did not build: {exc}"
        return None
    probe = subprocess.run([sys.executable, "-c", f"import {modules[trainer]}"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else probe.stderr.strip().splitlines()[-1]


def run_once(trainer: str, path: Path, merges: int, threads: int) -> dict:
    """One fresh process: its result, wall seconds, peak RSS (MiB) and CPU seconds."""
    code = ("import json, sys; from benches.words import child; "
            "print(json.dumps(child(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))")
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code, trainer, str(path), str(merges),
                                str(threads)], cwd=ROOT, stdout=subprocess.PIPE)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process_seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{trainer} failed with exit code {process.returncode}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    result.update(trainer=trainer, threads=threads, peak_rss_mib=round(usage.ru_maxrss / 1024, 1),
                  cpu_seconds=round(usage.ru_utime + usage.ru_stime, 3),
                  seconds=round(result["seconds"], 3), process_seconds=round(process_seconds, 3))
    return result


def summarise(runs: list[dict]) -> list[dict]:
    rows = []
    for key in sorted({(r["trainer"], r["threads"]) for r in runs}):
        mine = [r for r in runs if (r["trainer"], r["threads"]) == key]
        rows.append({"trainer": key[0], "threads": key[1], "runs": len(mine),
                     "learned": mine[0]["learned"],
                     "seconds": statistics.median(r["seconds"] for r in mine),
                     "cpu_seconds": statistics.median(r["cpu_seconds"] for r in mine),
                     "process_seconds": statistics.median(r.get("process_seconds", float("nan"))
                                                          for r in mine),
                     "peak_rss_mib": max(r["peak_rss_mib"] for r in mine)})
    for row in rows:
        peer = next((p for p in rows if p["trainer"] == "youtokentome"
                     and p["threads"] == row["threads"]), None)
        if peer is not None:
            row["time_vs_yttm"] = round(row["seconds"] / peer["seconds"], 3)
            row["cpu_vs_yttm"] = round(row["cpu_seconds"] / peer["cpu_seconds"], 3)
            row["rss_vs_yttm"] = round(row["peak_rss_mib"] / peer["peak_rss_mib"], 3)
    return rows


def _versions(trainers: list[str]) -> dict:
    from importlib import metadata

    names = {"youtokentome": "youtokentome", "subword-nmt": "subword-nmt", "fastbpe": "fastBPE"}
    versions = {"bytepair": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                           capture_output=True, text=True).stdout.strip()}
    for trainer in trainers:
        if trainer in names:
            try:
                versions[trainer] = metadata.version(names[trainer])
            except metadata.PackageNotFoundError:
                versions[trainer] = "0.1.0 (source, compiled here)" if trainer == "fastbpe" else None
    return versions


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.words", description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="10MB", help="English corpus size (benches.corpus)")
    parser.add_argument("--merges", type=int, default=32000)
    parser.add_argument("--threads", type=int, action="append", help="repeatable (default: 1)")
    parser.add_argument("--trainer", action="append", choices=TRAINERS,
                        help="repeatable (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per trainer and thread count")
    parser.add_argument("-o", "--output", help="JSON file (default: benches/results/words-SIZE.json)")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpora.apply_fetch_option(args)
    path = corpora.corpus_path(corpora.parse_size(args.size))
    trainers = args.trainer or list(TRAINERS)
    threads = args.threads or [1]
    skipped = {t: why for t in trainers if (why := installed(t)) is not None}
    for trainer, why in skipped.items():
        print(f"{trainer}: not run ({why})", file=sys.stderr)
    load_before = _load()
    runs = []
    for _ in range(args.repeat):
        for count in threads:
            for trainer in trainers:
                if trainer in skipped or (trainer in ONE_THREAD and count > 1):
                    continue
                result = run_once(trainer, path, args.merges, count)
                print(json.dumps(result), file=sys.stderr)
                runs.append(result)
    report = {
        "command": "python -m benches.words " + " ".join(argv if argv is not None else sys.argv[1:]),
        "corpus": {"path": path.name, "bytes": path.stat().st_size},
        "merges": args.merges,
        "versions": _versions(trainers),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_before": load_before, "load_after": _load()},
        "not_run": skipped,
        "summary": summarise(runs),
        "runs": runs,
    }
    output = Path(args.output) if args.output else RESULTS / f"words-{args.size}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=1) + "\n")
    for row in report["summary"]:
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
