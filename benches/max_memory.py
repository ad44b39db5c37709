"""The memory limit (``max_memory`` / ``--max-memory``): how good its estimates are, and
what a limit does on a large corpus.

Three parts, each a subcommand, each measurement in a fresh process:

``forecast``
    The forecast made before any work (``bytepair.learn.budget.forecast``: a 32 MiB
    sample spread over the input) against what counting the whole input finds:
    the distinct pieces' bytes (the engine's positions) and their number.
``need``
    The forecast alone, as training makes it before any work (in under a second or
    two), and the need it names against the measured peak of a phase-memory run of
    the same corpus (``benches/phase_memory.py``), where there is one.
``calibrate``
    The engine's estimate (``budget.engine_bytes``) against what the process grows
    by from the end of counting to its peak while learning (``VmHWM`` reset through
    ``/proc/self/clear_refs`` once counting is done; Linux).
``limit``
    ``bytepair train FILE --per-line --vocab-size V --workers W --max-memory SIZE``
    for each SIZE, then the same without a limit, each under ``/usr/bin/time -v``: wall
    time, peak RSS (the process and its waited-for children), exit status, the message,
    and whether the model file is byte for byte the one without a limit.

    python -m benches.max_memory forecast --size 10MB 100MB 1GB
    python -m benches.max_memory calibrate --size 10MB 100MB 1GB
    python -m benches.max_memory limit --size 1GB --max-memory 512MiB 1GiB
    python -m benches.max_memory render --json benches/results/max-memory-1GB.json
    python -m benches.max_memory forecast --language synthetic --size 100MB 1GB 3GB
    python -m benches.max_memory need --language synthetic --size 1GB 3GB 10GB

Each writes benches/results/max-memory-<part>.json (``limit``: max-memory-<size>.json;
``--no-write`` to skip) and prints its table.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import corpus as corpora

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results"

# One forecast against the real counts, in a process of its own.
FORECAST = """
import json, sys, time
import bytepair
from bytepair.learn import budget
from bytepair.read.corpus import Files
from bytepair.split.pretokenize import resolve_pattern
path, workers = sys.argv[1], int(sys.argv[2])
budget.FORECAST_FROM = 0  # the forecast of small inputs too (training counts them instead)
start = time.perf_counter()
seen = budget.forecast(Files(path, per_line=True), resolve_pattern("gpt2"))
seconds = time.perf_counter() - start
data, _, counts = bytepair.count(path, per_line=True, workers=workers, progress=False).flat()
print(json.dumps({"forecast_seconds": seconds, "sample": seen.sample, "bytes": seen.total,
                  "positions": len(data), "pieces": len(counts),
                  "positions_forecast": seen.positions, "pieces_forecast": seen.pieces}))
"""

# The forecast alone, as training makes it before any work: what it needs and how long it took.
NEED = """
import json, sys, time
import bytepair
from bytepair.learn import budget
from bytepair.read.corpus import Files
from bytepair.split.pretokenize import resolve_pattern
path, merges = sys.argv[1], int(sys.argv[2])
held = budget.resident_bytes()
start = time.perf_counter()
seen = budget.forecast(Files(path, per_line=True), resolve_pattern("gpt2"))
seconds = time.perf_counter() - start
low, expected = seen.need(merges, held)
print(json.dumps({"forecast_seconds": seconds, "sample": seen.sample, "bytes": seen.total,
                  "held": held, "positions_forecast": seen.positions[1],
                  "pieces_forecast": seen.pieces[1], "need": expected, "refuses_below": low}))
"""

# Count, then learn with the peak reset in between: what learning adds to what is held.
CALIBRATE = """
import json, sys
import bytepair
from bytepair.learn import budget
from bytepair.learn.loop import learn_counts
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field + ":"))
path, workers, merges = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
counts = bytepair.count(path, per_line=True, workers=workers, progress=False)
data, _, weights = counts.flat()
positions, pieces = len(data), len(weights)
del data, weights
held = budget.resident_bytes()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
rules = learn_counts(counts, merges, release=True)
grown = status("VmHWM") - held
print(json.dumps({"positions": positions, "pieces": pieces, "merges": len(rules), "held": held,
                  "grown": grown, "estimate": budget.engine_bytes(positions, pieces, merges)}))
"""


def _python(code: str, *args) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mib(size: float) -> float:
    return round(size / 2**20, 1)


_LANGUAGE: str | None = None  # --language


def _path(size: str) -> Path:
    if _LANGUAGE:
        return corpora.corpus_path(size, language=_LANGUAGE)
    large = corpora.parse_size(size) > 10**8
    return corpora.corpus_path(size, language="large") if large else corpora.corpus_path(size)


def forecast(args) -> dict:
    rows = []
    for size in args.size:
        path = _path(size)
        r = _python(FORECAST, path, args.workers)
        rows.append({"corpus": size, "file": path.name, **r,
                     "positions_ratio": [round(x / r["positions"], 3) for x in r["positions_forecast"]],
                     "pieces_ratio": [round(x / r["pieces"], 3) for x in r["pieces_forecast"]]})
        print(f"{size:>6}: positions {r['positions']:>11,} forecast {r['positions_forecast']} "
              f"({rows[-1]['positions_ratio']}); pieces {r['pieces']:>9,} forecast "
              f"{r['pieces_forecast']} ({rows[-1]['pieces_ratio']}); {r['forecast_seconds']:.3f} s",
              flush=True)
    return {"rows": rows}


def need(args) -> dict:
    """The forecast's need against the peak and counts of a phase-memory run of the same
    corpus (``benches/results/phase-memory-<language>-<size>.json``), where there is one."""
    rows = []
    for size in args.size:
        path = _path(size)
        r = _python(NEED, path, args.vocab_size - 256)
        row = {"corpus": size, "file": path.name, **r}
        measured = RESULTS / f"phase-memory-{_LANGUAGE or 'english'}-{size}.json"
        if measured.exists():
            run = json.loads(measured.read_text())["runs"][0]
            row.update(measured=measured.name, peak_mib=run["peak_mib"], positions=run["positions"],
                       pieces=run["pieces"],
                       need_ratio=round(r["need"] / (run["peak_mib"] * 2**20), 3),
                       positions_ratio=round(r["positions_forecast"] / run["positions"], 3),
                       pieces_ratio=round(r["pieces_forecast"] / run["pieces"], 3))
        rows.append(row)
        print(f"{size:>6}: need {_mib(r['need'])} MiB (refuses below {_mib(r['refuses_below'])} MiB), "
              f"{r['forecast_seconds']:.2f} s" + (f"; measured peak {row['peak_mib']} MiB: "
              f"{row['need_ratio']}x, positions {row['positions_ratio']}x, pieces "
              f"{row['pieces_ratio']}x" if "peak_mib" in row else ""), flush=True)
    return {"rows": rows, "vocab_size": args.vocab_size}


def calibrate(args) -> dict:
    rows = []
    for size in args.size:
        path = _path(size)
        r = _python(CALIBRATE, path, args.workers, args.vocab_size - 256)
        rows.append({"corpus": size, "file": path.name, **r,
                     "estimate_ratio": round(r["estimate"] / r["grown"], 3),
                     "grown_per_position": round(r["grown"] / r["positions"], 2)})
        print(f"{size:>6}: {r['positions']:>11,} positions, {r['pieces']:>9,} pieces: held "
              f"{_mib(r['held'])} MiB, grown {_mib(r['grown'])} MiB, estimate "
              f"{_mib(r['estimate'])} MiB ({rows[-1]['estimate_ratio']}x)", flush=True)
    return {"rows": rows, "vocab_size": args.vocab_size}


def _timed(command: list[str]) -> dict:
    """``command`` under ``/usr/bin/time -v``: wall time, peak RSS, status, its last line."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    said = [line for line in done.stderr.splitlines() if line.startswith("bytepair")]
    return {"command": " ".join(command), "seconds": round(wall, 2), "peak_rss_mib": _mib(peak * 1024),
            "exit": done.returncode, "message": said[-1] if said else ""}


def limit(args) -> dict:
    """Each ``--max-memory`` in turn, then no limit; the models compared with the free one's."""
    path = _path(args.size[0])
    bytepair = str(Path(sys.executable).with_name("bytepair"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bytepair-bench-limit-") as tmp:
        common = [bytepair, "train", str(path), "--per-line", "--vocab-size", str(args.vocab_size),
                  "--workers", str(args.workers), "-q"]
        ways = [(f"--max-memory {size}", ["--max-memory", size], Path(tmp) / f"limited-{size}.json")
                for size in args.max_memory]
        ways.append(("no limit", [], Path(tmp) / "free.json"))
        for way, options, model in ways:
            rows.append({"way": way, "load_before": round(os.getloadavg()[0], 2),
                         **_timed(common + options + ["-o", str(model)])})
        free = ways[-1][2].read_bytes() if ways[-1][2].exists() else None
        for row, (_, _, model) in zip(rows, ways):
            row["same_model_as_no_limit"] = model.exists() and model.read_bytes() == free
            row["command"] = row["command"].replace(str(path), path.name).replace(tmp, "OUT")
            row["command"] = row["command"].replace(bytepair, "bytepair")
    for row in rows:
        print(f"{row['way']:>22}: {row['seconds']:.1f} s, peak RSS {row['peak_rss_mib']} MiB, exit "
              f"{row['exit']}, same model: {row['same_model_as_no_limit']} {row['message']}", flush=True)
    return {"rows": rows, "corpus": path.name, "bytes": path.stat().st_size,
            "vocab_size": args.vocab_size}


def render(path: Path) -> str:
    """The Markdown table of a ``limit`` result (docs/benchmarks.md)."""
    r = json.loads(Path(path).read_text())
    lines = [f"`{r['command']}` ({r['date'][:16].replace('T', ' ')} UTC, "
             f"load {r['load_average_start'][0]:.1f} before, {r['load_average_end'][0]:.1f} after, "
             f"on {r['cpus']} cores):", "",
             "| command | wall time | peak RSS | exit | same model as without a limit | message |",
             "|---|---:|---:|---:|---|---|"]
    for row in r["rows"]:
        same = ("(stopped, no model)" if row["exit"] else "(the reference)" if row["way"] == "no limit"
                else "yes" if row["same_model_as_no_limit"] else "NO")
        lines.append(f"| `{row['command']}` | {row['seconds']:.1f} s | {row['peak_rss_mib']:.0f} MiB "
                     f"| {row['exit']} | {same} | {row['message']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.max_memory",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("part", choices=["forecast", "need", "calibrate", "limit", "render"],
                        help="render: print the table of the limit result --json names")
    parser.add_argument("--json", type=Path, help="with render: a limit result file")
    parser.add_argument("--size", nargs="+", default=["100MB"])
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-memory", nargs="+", default=["512MiB"])
    parser.add_argument("--language", default=None,
                        help="a corpus of benches/corpus.py, e.g. synthetic (simulated text)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    global _LANGUAGE
    _LANGUAGE = args.language
    if args.part == "render":
        print(render(args.json))
        return 0
    load = os.getloadavg()
    report = {"suite": "max-memory", "part": args.part,
              "command": "python -m benches.max_memory " + " ".join(argv if argv is not None else sys.argv[1:]),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                       capture_output=True, text=True).stdout.strip(),
              "workers": args.workers, "cpus": os.cpu_count(), "load_average_start": load,
              **{"forecast": forecast, "need": need, "calibrate": calibrate,
                 "limit": limit}[args.part](args)}
    report["load_average_end"] = os.getloadavg()
    name = f"max-memory-{args.size[0]}.json" if args.part == "limit" else f"max-memory-{args.part}.json"
    if args.language:
        name = name.replace("max-memory-", f"max-memory-{args.language}-")
    if not args.no_write:
        (RESULTS / name).write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote benches/results/{name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
