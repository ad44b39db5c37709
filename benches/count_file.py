"""A whole ``bytepair count`` process against gigatoken's own pre-tokenization time.

``bytepair count FILE --workers 1 --pretokenize PATTERN -o OUT`` is timed as a whole
process (start, reading, splitting, counting, writing the count file); gigatoken's
``train_bpe`` on the same file with one thread (``RAYON_NUM_THREADS=1``) reports the time
its pre-tokenization took (split and count, before any merge), which is read from its log.
The two take turns, each in a fresh process, and the load average is recorded beside
every run. gigatoken cuts with its own pattern; the file is one document for both. With
``--against SRC`` the package in another source tree (its ``src/`` folder) runs ``count`` too,
in the same turns, as "bytepair SRC".

    python -m benches.count_file --size 100MB --turns 5
    python -m benches.count_file --size 100MB --turns 3 --against /work/main/src
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benches import corpus

RESULTS = Path(__file__).resolve().parent / "results" / "count-file.json"

#: gigatoken's pre-tokenization, its vocabulary one merge past the bytes.
_GIGATOKEN = """
import sys, gigatoken
gigatoken.train_bpe(gigatoken.TextFileSource([sys.argv[1]]), 257, [])
"""
_REPORTED = re.compile(r"Pretokenization took ([0-9.]+)(ns|µs|us|ms|s)\b")
_UNIT = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def bytepair_run(path: Path, pattern: str, src: Path | None = None) -> dict:
    """The whole ``bytepair count`` process (of the package in ``src``, when given): wall
    seconds and the count file's size."""
    env = None if src is None else {**os.environ, "PYTHONPATH": str(src)}
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "table.counts"
        cpu = _children_cpu()
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bytepair", "count", str(path), "--workers", "1",
                        "--pretokenize", pattern, "-o", str(out), "-q"], check=True, env=env)
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "cpu_seconds": _children_cpu() - cpu,
                "file_bytes": out.stat().st_size}


def _children_cpu() -> float:
    """User + system seconds of the child processes ended so far (on a busy machine the
    CPU time of a run says more than its wall time)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def gigatoken_run(path: Path) -> dict:
    """gigatoken's reported pre-tokenization seconds, and its whole process's."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1", "RUST_LOG": "info"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _GIGATOKEN, str(path)], env=env, check=True,
                          capture_output=True, text=True)
    whole = time.perf_counter() - started
    found = _REPORTED.search(done.stdout + done.stderr)
    if found is None:
        raise RuntimeError("gigatoken did not report its pre-tokenization time:\n"
                           + (done.stdout + done.stderr)[-2000:])
    return {"seconds": float(found.group(1)) * _UNIT[found.group(2)], "process_seconds": whole}


def summary(runs: list[dict]) -> dict:
    times = [run["seconds"] for run in runs]
    out = {"median": statistics.median(times), "min": min(times)}
    if "cpu_seconds" in runs[0]:
        out["median_cpu"] = statistics.median(run["cpu_seconds"] for run in runs)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100MB", help="English corpus size (benches.corpus)")
    parser.add_argument("--corpus", help="this text file instead of the English recipe")
    parser.add_argument("--pattern", default="cl100k", help="bytepair's pattern (default cl100k)")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="also time count of the package in this source tree")
    args = parser.parse_args(argv)
    if args.turns < 1:
        parser.error("--turns: at least 1")
    path = corpus.corpus_path(args.size, args.corpus)
    other = f"bytepair {args.against}"
    rows = {"bytepair": [], "gigatoken": [], **({other: []} if args.against else {})}
    for turn in range(args.turns):
        order = list(rows) if turn % 2 == 0 else list(reversed(rows))
        for name in order:
            load = os.getloadavg()[0]
            if name == "gigatoken":
                run = gigatoken_run(path)
            else:
                run = bytepair_run(path, args.pattern, args.against if name == other else None)
            run.update(load_before=load, load_after=os.getloadavg()[0])
            rows[name].append(run)
            print(name, json.dumps(run), flush=True)
    result = {"command": "python -m benches.count_file " + " ".join(
                  argv if argv is not None else sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "corpus": str(path), "bytes": path.stat().st_size, "pattern": args.pattern,
              "runs": rows, **{name: summary(runs) for name, runs in rows.items()}}
    result["ratio_median"] = result["bytepair"]["median"] / result["gigatoken"]["median"]
    shown = [*rows, "ratio_median"]
    if args.against:
        result["ratio_median_against"] = result[other]["median"] / result["gigatoken"]["median"]
        shown.append("ratio_median_against")
    print(json.dumps({key: result[key] for key in shown}))
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
