"""Bounded counting memory and checkpoints: what they cost and what they save.

On real English (benches.corpus), GPT-2 pre-tokenizer, one document per line,
``bytepair count`` is run in a fresh process per measurement, three ways taking
turns for ``--repeat`` rounds (best wall time and peak RSS kept for each):

* ``in-memory``: the default, one table per worker thread, merged at the end;
* ``spilled``: ``count_memory`` bytes (``--count-memory``): tables past their
  share are written to TMPDIR as sorted runs and merged at the end;
* ``checkpointed``: ``checkpoint=DIR`` (a fresh directory): every unit is kept
  on disk as a run, then merged.

Peak RSS is the counting process's, read when ``count`` returns (before the
table is saved, which builds a dict of the pieces in every way alike).

The three tables must be equal (their saved files are compared byte for byte).

    python -m benches.spill                              # 100MB, 2 workers, 32 MiB bound
    python -m benches.spill --size 10MB --count-memory 4M --repeat 1

Writes benches/results/spill.json (``--no-write`` to skip) and prints the table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import corpus as corpora

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "spill.json"

# One measurement, in a process of its own: count, save, report time and peak RSS.
ONE = """
import json, resource, sys, time
import bytepair
path, out, workers, options = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
start = time.perf_counter()
table = bytepair.count(path, per_line=True, workers=workers, progress=False, **options)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # counting's, before the save
table.save(out)
print(json.dumps({"seconds": seconds, "peak_rss_mib": peak, "pieces": len(table), "total": table.total()}))
"""


def measure(path: Path, out: Path, workers: int, options: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", ONE, str(path), str(out), str(workers),
                           json.dumps(options)], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100MB", help="corpus size (100MB)")
    parser.add_argument("--corpus", help="a text file to use instead of the English recipe")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--count-memory", default="32M", help="the spilled run's bound (32M)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-write", action="store_true")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpora.apply_fetch_option(args)
    from bytepair.cli.training import memory_size

    bound = memory_size(args.count_memory)
    path = corpora.corpus_path(args.size, args.corpus)
    ways = {"in-memory": {}, "spilled": {"count_memory": bound}, "checkpointed": None}
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bytepair-bench-spill-") as tmp:
        for round_ in range(args.repeat):
            for name, options in ways.items():
                if options is None:
                    options = {"checkpoint": str(Path(tmp) / f"checkpoint-{round_}")}
                result = measure(path, Path(tmp) / name, args.workers, options)
                kept = best.setdefault(name, result)
                kept["seconds"] = min(kept["seconds"], result["seconds"])
                kept["peak_rss_mib"] = min(kept["peak_rss_mib"], result["peak_rss_mib"])
        files = {name: (Path(tmp) / name).read_bytes() for name in ways}
    if len(set(files.values())) != 1:
        raise SystemExit("the tables differ")
    base = best["in-memory"]
    rows = []
    for name, result in best.items():
        rows.append({"way": name, **{k: round(v, 3) if isinstance(v, float) else v
                                     for k, v in result.items()},
                     "time_ratio": round(result["seconds"] / base["seconds"], 3),
                     "rss_ratio": round(result["peak_rss_mib"] / base["peak_rss_mib"], 3)})
    report = {
        "suite": "spill",
        "command": "python -m benches.spill " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "corpus": {"path": path.name, "bytes": path.stat().st_size},
        "workers": args.workers, "count_memory": bound, "repeat": args.repeat,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average": os.getloadavg()},
        "rows": rows,
    }
    print(f"{path.name}, {args.workers} workers, --count-memory {args.count_memory}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'way':<14}{'seconds':>9}{'peak RSS MiB':>14}{'time x':>8}{'RSS x':>7}")
    for row in rows:
        print(f"{row['way']:<14}{row['seconds']:>9.2f}{row['peak_rss_mib']:>14.1f}"
              f"{row['time_ratio']:>8.2f}{row['rss_ratio']:>7.2f}")
    if not args.no_write:
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
