"""How long the command line takes to start: ``python -m bytepair count --help`` (or another
command) as a whole fresh process, for this tree and another source tree, side by side.

Each source tree is run two ways: with its byte code compiled at every start (as with
``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__``, which a checkout run in place gives) and
with it written once and then read (as an installed wheel does; the byte code goes to a
temporary ``PYTHONPYCACHEPREFIX``, so no ``__pycache__`` is left in the trees). The kinds take
turns, so that the load on the machine hits them alike; the figures are medians of wall and
CPU time (user + system, from ``wait4``). Writes benches/results/cli-start.json::

    python -m benches.cli_start --against /work/main/src --runs 21
    python -m benches.cli_start --against /work/main/src -- encode --help
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from .import_time import summary, time_process

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "cli-start.json"


def _env(src: Path, cache: Path | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.cli_start",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="fresh processes of each kind (21)")
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="also measure the package in this source tree (its src/ folder)")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("command", nargs="*", default=["count", "--help"],
                        help="the bytepair command to start (default: count --help)")
    args = parser.parse_args(argv)
    if args.runs < 3:
        parser.error("--runs: at least 3")
    trees = {"this tree": ROOT / "src", **({str(args.against): args.against} if args.against else {})}
    with tempfile.TemporaryDirectory() as folder:
        kinds = {}
        for name, src in trees.items():
            kinds[f"{name}, compiled at each start"] = _env(src, None)
            kinds[f"{name}, byte code read"] = _env(src, Path(folder) / f"cache-{len(kinds)}")
        for env in kinds.values():
            time_process(["-m", "bytepair", *args.command], env)  # writes the byte code of the cached kinds
        load_before = os.getloadavg()
        times: dict[str, list] = {kind: [] for kind in kinds}
        for _ in range(args.runs):
            for kind, env in kinds.items():
                times[kind].append(time_process(["-m", "bytepair", *args.command], env))
        load_after = os.getloadavg()
    report = dict(
        suite="cli-start", command="python -m benches.cli_start " + " ".join(
            argv if argv is not None else sys.argv[1:]),
        measured="python -m bytepair " + " ".join(args.command),
        kinds={kind: summary(runs) for kind, runs in times.items()},
        load_average=dict(before=[round(x, 2) for x in load_before],
                          after=[round(x, 2) for x in load_after]),
        when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    for kind, timed in report["kinds"].items():
        print(f"{kind}: {timed['median_wall_ms']} ms wall, {timed['median_cpu_ms']} ms CPU "
              f"(medians of {timed['runs']})")
    print(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}; wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
