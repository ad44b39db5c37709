"""Counting at scale: a Dask LocalCluster against local worker processes, and table sizes.

Two measurements on real English (benches.corpus), GPT-2 pre-tokenizer:

* throughput: the corpus is cut into shard files (whole lines) and counted
  with ``bytepair.count(files, workers=1)``, ``workers=2`` and
  ``client=`` a ``LocalCluster`` of 2 worker processes (1 thread each). The
  cluster is started before timing; the ways take turns for ``--repeat``
  rounds and each keeps its best wall time. All tables must be equal.
* table size: for each corpus size, the distinct pieces, their bytes and the
  size of the saved counts file, against the corpus size.

    python -m benches.scale                          # 10MB and 100MB (~3 min)
    python -m benches.scale --sizes 1MB 10MB --shards 4 --repeat 1

Writes benches/results/scale.json and the table between the scale markers
of docs/benchmarks.md (``--no-write`` to skip both), and prints the table.
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

import bytepair
from bytepair import PieceCounts

from . import corpus as corpora

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "scale.json"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- scale:begin -->", "<!-- scale:end -->"


def shard(path: Path, directory: Path, shards: int) -> list[Path]:
    """Cut a text file into ``shards`` files of whole lines, about equal in size."""
    data = path.read_bytes()
    out, start = [], 0
    for i in range(shards):
        end = len(data) if i == shards - 1 else data.find(b"\n", (i + 1) * len(data) // shards) + 1
        end = end if end > 0 else len(data)
        target = directory / f"shard-{i:03d}.txt"
        target.write_bytes(data[start:end])
        out.append(target)
        start = end
    return out


def throughput(path: Path, shards: int, repeat: int, client) -> list[dict]:
    size = path.stat().st_size
    with tempfile.TemporaryDirectory(prefix="bytepair-scale-") as tmp:
        files = shard(path, Path(tmp), shards)
        ways = {
            "workers=1": lambda: bytepair.count(files, per_line=True, workers=1, progress=False),
            "workers=2": lambda: bytepair.count(files, per_line=True, workers=2, progress=False),
            "LocalCluster(2 workers)": lambda: bytepair.count(files, per_line=True, client=client,
                                                              progress=False),
        }
        # Rounds interleave the ways, so that load from elsewhere falls on all of them.
        best = {name: float("inf") for name in ways}
        tables = {}
        for _ in range(repeat):
            for name, run in ways.items():
                start = time.perf_counter()
                tables[name] = run()
                best[name] = min(best[name], time.perf_counter() - start)
        rows = [{"way": name, "corpus_bytes": size, "shards": shards,
                 "seconds": round(best[name], 3), "mb_per_s": round(size / best[name] / 1e6, 2),
                 "distinct_pieces": len(tables[name])} for name in ways]
        tables = list(tables.values())
        if any(t != tables[0] for t in tables):
            raise SystemExit("the tables differ between ways of counting")
    return rows


def table_size(path: Path) -> dict:
    table = bytepair.count(path, per_line=True, workers=1, progress=False)
    with tempfile.TemporaryDirectory(prefix="bytepair-scale-") as tmp:
        saved = Path(tmp) / "table.counts"
        start = time.perf_counter()
        table.save(saved)
        save_s = time.perf_counter() - start
        start = time.perf_counter()
        if PieceCounts.load(saved) != table:
            raise SystemExit("the saved table does not load back equal")
        load_s = time.perf_counter() - start
        file_bytes = saved.stat().st_size
    corpus_bytes = path.stat().st_size
    return {"corpus_bytes": corpus_bytes, "distinct_pieces": len(table), "total_pieces": table.total(),
            "piece_bytes": sum(map(len, table)), "file_bytes": file_bytes,
            "file_per_corpus": round(file_bytes / corpus_bytes, 5),
            "save_s": round(save_s, 3), "load_s": round(load_s, 3)}


def render(report: dict) -> str:
    lines = ["counting throughput (GPT-2 pieces, best of "
             f"{report['settings']['repeat']}):", "",
             "| corpus | shards | way | wall time | MB/s |", "|---|---|---|---|---|"]
    for row in report["throughput"]:
        lines.append(f"| {row['corpus_bytes'] / 1e6:.0f} MB | {row['shards']} | {row['way']} "
                     f"| {row['seconds']:.2f} s | {row['mb_per_s']:.1f} |")
    lines += ["", "count table size:", "",
              "| corpus | distinct pieces | piece bytes | table file | file / corpus |",
              "|---|---|---|---|---|"]
    for row in report["tables"]:
        lines.append(f"| {row['corpus_bytes'] / 1e6:.0f} MB | {row['distinct_pieces']:,} "
                     f"| {row['piece_bytes']:,} | {row['file_bytes']:,} B | {row['file_per_corpus']:.2%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.scale", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["10MB", "100MB"], metavar="SIZE")
    parser.add_argument("--shards", type=int, default=8, help="shard files per corpus (8)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per way, best kept (3)")
    parser.add_argument("--corpus", default=None, help="a text file instead of the English corpus")
    parser.add_argument("--no-write", action="store_true",
                        help="do not write the results file and docs/benchmarks.md")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpora.apply_fetch_option(args)
    from distributed import Client, LocalCluster

    paths = [corpora.corpus_path(size, args.corpus) for size in args.sizes]
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": "python -m benches.scale " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(),
                    # Other work on the machine skews every way; the 1-minute load says how much.
                    "load_average_at_start": round(os.getloadavg()[0], 2)},
        "code": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip(),
        "settings": {"shards": args.shards, "repeat": args.repeat, "pretokenize": "gpt2",
                     "cluster": "LocalCluster(n_workers=2, threads_per_worker=1, processes=True)"},
        "throughput": [], "tables": [],
    }
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}) as cluster, \
            Client(cluster) as client:
        for path in paths:
            report["throughput"] += throughput(path, args.shards, args.repeat, client)
    for path in paths:
        report["tables"].append(table_size(path))
    report["machine"]["load_average_at_end"] = round(os.getloadavg()[0], 2)
    print(render(report))
    if not args.no_write:
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        doc = DOC.read_text()
        head, rest = doc.split(BEGIN, 1)
        machine = report["machine"]
        table = (f"Run on {machine['cpus']} CPUs (Python "
                 f"{machine['python']}), {report['date']}; 1-minute load average "
                 f"{machine['load_average_at_start']} at the start, "
                 f"{machine['load_average_at_end']} at the end.\n\n{render(report)}\n")
        DOC.write_text(f"{head}{BEGIN}\n{table}{END}{rest.split(END, 1)[1]}")
        print(f"wrote {RESULTS.relative_to(ROOT)} and {DOC.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
