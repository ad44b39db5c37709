"""Peak RSS and time of each phase of ``bytepair.train``, each run in a fresh process.

    python -m benches.phase_memory --size 100MB --threads 1 2
    python -m benches.phase_memory --size 100MB --library HEAD~1 --library HEAD --repeat 2
    python -m benches.phase_memory --size 1GB --language synthetic --threads 2

The phases are the calls ``bytepair.train`` makes (wrapped as in
benches/peers.py): ``count`` (read, split and count), ``flat`` (the table as
flat arrays), ``build`` (the engine: token lists, pair table, occurrence
lists, first queue), ``merges`` (the merge loop). Before each phase the
process's peak RSS (``VmHWM``) is reset by writing 5 to
``/proc/self/clear_refs`` (Linux), so each phase's peak is its own, read from
the OS; the counting workers' own peaks (``workers`` > 1) are not in it, their
sum is sampled by benches/harness.py's tree sampler in the ladder instead.
``--library REV`` measures bytepair as committed at REV (built once under the
cache); several are run in turn, ``--repeat`` rounds, so that the versions
compared take turns under the same load. Writes
benches/results/phase-memory.json (``--json``) and prints a table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import corpus as corpora
from .harness import ROOT, code_info, library_snapshot

RESULTS = ROOT / "benches" / "results" / "phase-memory.json"


def _status(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def worker(path: str, merges: int, threads: int) -> dict:
    """One run in this process: per phase, seconds, RSS at its end and its peak (MiB)."""
    import bytepair
    from bytepair import training
    from bytepair.learn import incremental

    phases: dict[str, dict] = {}

    def timed(name, function):
        def wrapper(*args, **kwargs):
            _reset_peak()
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                # The merge loop is many calls (chunks): add their times, keep the top peak.
                seen = phases.setdefault(name, dict(seconds=0.0, peak_mib=0.0))
                seen["seconds"] = round(seen["seconds"] + time.perf_counter() - started, 3)
                seen["peak_mib"] = max(seen["peak_mib"], round(_status("VmHWM"), 1))
                seen["end_mib"] = round(_status("VmRSS"), 1)
                _reset_peak()

        return wrapper

    from bytepair.training import trainer as training_stage
    if hasattr(training_stage, "count_corpus"):
        training_stage.count_corpus = timed("count", training_stage.count_corpus)
    else:  # an older bytepair counted through these
        for name in ("count_pieces", "count_files"):
            setattr(training, name, timed("count", getattr(training, name)))
    trainer = incremental.IncrementalEngine
    trainer.steps = timed("merges", trainer.steps)
    for build in ("from_arrays", "taking_arrays"):  # an older bytepair has no taking_arrays
        if hasattr(trainer, build):
            setattr(trainer, build, staticmethod(timed("build", getattr(trainer, build))))
    flat = timed("flat", bytepair.PieceCounts.flat)
    table: dict[str, int] = {}

    def flat_and_sizes(self):
        data, starts, counts = flat(self)
        table.update(positions=len(data), pieces=len(counts))  # for the memory model
        return data, starts, counts

    bytepair.PieceCounts.flat = flat_and_sizes
    start_mib = _status("VmRSS")
    started = time.perf_counter()
    tok = bytepair.train(path, merges=merges, pretokenize="gpt2", per_line=True,
                         workers=threads, progress=False)
    wall = time.perf_counter() - started
    return dict(wall=round(wall, 3), learned=len(tok.merges), start_mib=round(start_mib, 1),
                **table,
                peak_mib=round(max(p["peak_mib"] for p in phases.values()), 1), phases=phases,
                library=str(Path(bytepair.__file__).parent),
                loadavg=round(os.getloadavg()[0], 2))


def run_one(path: Path, merges: int, threads: int, library: Path | None) -> dict:
    env = dict(os.environ)
    first = ([str(library)] if library else []) + [str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(first + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    spec = json.dumps(dict(path=str(path), merges=merges, threads=threads))
    out = subprocess.run([sys.executable, "-m", "benches.phase_memory", "--worker", spec],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.phase_memory",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--threads", nargs="+", type=int, default=[1])
    parser.add_argument("--library", action="append", metavar="REV",
                        help="bytepair as committed at REV (repeatable; 'worktree': the working "
                        "tree); default: the working tree")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--language", default=None,
                        help="a corpus of benches/corpus.py, e.g. synthetic (default: the English "
                        "recipe up to 100 MB, the large corpus above)")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        spec = json.loads(args.worker)
        print(json.dumps(worker(spec["path"], spec["merges"], spec["threads"])))
        return 0
    if args.language:
        path = corpora.corpus_path(args.size, language=args.language)
    else:
        path = corpora.corpus_path(args.size) if corpora.parse_size(args.size) <= 10**8 else \
            corpora.corpus_path(args.size, language="large")
    libraries = [(rev, None if rev == "worktree" else library_snapshot(rev))
                 for rev in args.library or ["worktree"]]
    rows = []
    for _ in range(args.repeat):
        for threads in args.threads:
            for rev, library in libraries:
                r = run_one(path, args.vocab - 256, threads, library)
                r.update(rev=rev, code=code_info(library), threads=threads)
                rows.append(r)
                p = r["phases"]
                print(f"{rev:>14} threads={threads} wall {r['wall']:.2f} s peak {r['peak_mib']:.0f} "
                      "MiB | " + ", ".join(f"{k} {v['seconds']:.2f} s peak {v['peak_mib']:.0f} "
                                           f"end {v['end_mib']:.0f}" for k, v in p.items())
                      + f" | load {r['loadavg']}", flush=True)
    report = dict(date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  command="python -m benches.phase_memory " + " ".join(
                      argv if argv is not None else sys.argv[1:]),
                  corpus=str(path), bytes=path.stat().st_size, vocab=args.vocab, runs=rows)
    if not args.no_write:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
