"""What ``import bytepair`` adds to a bare Python start, measured side by side.

Each run is a fresh interpreter: ``python -c pass`` (the baseline) and
``python -c "import bytepair"`` alternate, so both see the same load on the
machine, and the figure is the difference of their medians. Both the CPU
time of the child (user + system, from ``wait4``) and its wall time are
kept: on a busy machine wall time mostly measures waiting for a core, so
the goal is judged on CPU time there. With
``--against REV`` the library as committed at ``REV`` (built once under the
benchmark cache, see ``benches/harness.py``) is measured in the same rotation.
Writes benches/results/import-time.json::

    python -m benches.import_time                      # 41 runs of each
    python -m benches.import_time --runs 61 --against 495028d

The goal is at most 50 ms added. One more run with ``-X importtime`` lists
the modules that cost the most, so a regression names its cause.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .harness import ROOT, code_info, library_snapshot, machine_info

RESULTS = ROOT / "benches" / "results" / "import-time.json"
GOAL_MS = 50
BASELINE = "pass"
IMPORT = "import bytepair"


def _env(src: Path) -> dict:
    # Byte code is written and then read, as from an installed wheel (pip compiles
    # it at install time); without it every run would compile the sources.
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def time_process(arguments: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one fresh ``python ARGUMENTS`` run with
    ``env`` (its output is dropped); a failed run ends the benchmark."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, *arguments], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise SystemExit(f"python {' '.join(arguments)!r} failed with exit code {code} "
                         f"(PYTHONPATH {env.get('PYTHONPATH')})")
    return wall, usage.ru_utime + usage.ru_stime


def _run(statement: str, src: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh interpreter running ``statement`` with ``src``
    first on the path."""
    return time_process(["-c", statement], _env(src))


def _where(src: Path) -> str:
    out = subprocess.run([sys.executable, "-c", "import bytepair; print(bytepair.__file__)"],
                         env=_env(src), check=True,
                         capture_output=True, text=True).stdout.strip()
    if not out.startswith(str(src)):
        raise SystemExit(f"{src}: imported bytepair from {out} instead")
    return out


def _costliest(src: Path, top: int = 12) -> list[dict]:
    """The modules with the largest cumulative import time under ``import bytepair`` (one run)."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORT], check=True,
                         env=_env(src), capture_output=True,
                         text=True).stderr
    rows = []
    for line in err.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            depth = (len(parts[2]) - len(parts[2].lstrip())) // 2
            rows.append(dict(module=parts[2].strip(), depth=depth,
                             cumulative_ms=int(parts[1]) / 1000))
    # Only what `import bytepair` brings in: the rows after the interpreter's own start-up.
    first = next(i for i, row in reversed(list(enumerate(rows))) if row["depth"] == 0
                 and row["module"] in ("site", "encodings"))
    mine = [row for row in rows[first + 1:] if row["module"] != "bytepair"]
    return sorted(mine, key=lambda row: -row["cumulative_ms"])[:top]


def summary(runs: list[tuple[float, float]]) -> dict:
    walls = [1000 * wall for wall, _ in runs]
    cpus = [1000 * cpu for _, cpu in runs]
    return dict(median_wall_ms=round(statistics.median(walls), 2), min_wall_ms=round(min(walls), 2),
                median_cpu_ms=round(statistics.median(cpus), 2), min_cpu_ms=round(min(cpus), 2),
                runs=len(runs))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.import_time", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=41, help="fresh interpreters of each kind (default 41)")
    parser.add_argument("--against", metavar="REV", help="also measure the library at this commit")
    parser.add_argument("--json", type=Path, default=RESULTS, help=f"output (default {RESULTS.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    if args.runs < 3:
        parser.error("--runs: at least 3")

    libraries = {"this tree": ROOT / "src"}
    if args.against:
        libraries[args.against] = library_snapshot(args.against)
    for src in libraries.values():
        _where(src)  # also writes the byte code that the timed runs read
    load_before = os.getloadavg()
    times: dict[str, list[tuple[float, float]]] = {"python -c pass": [], **{name: [] for name in libraries}}
    for _ in range(args.runs):
        # Alternate, so that a burst of load on the machine hits every kind alike.
        times["python -c pass"].append(_run(BASELINE, ROOT / "src"))
        for name, src in libraries.items():
            times[name].append(_run(IMPORT, src))
    load_after = os.getloadavg()

    baseline = summary(times["python -c pass"])
    measured = {}
    for name, src in libraries.items():
        timed = summary(times[name])
        for kind in ("wall", "cpu"):
            timed[f"added_{kind}_ms"] = round(timed[f"median_{kind}_ms"]
                                              - baseline[f"median_{kind}_ms"], 2)
        timed["costliest_imports"] = _costliest(src)
        measured[name] = timed
    report = dict(
        suite="import-time",
        command="python -m benches.import_time " + " ".join(argv if argv is not None else sys.argv[1:]),
        goal=f"import bytepair adds at most {GOAL_MS} ms (difference of medians, CPU time; "
             "wall time too when the machine is idle)",
        baseline=baseline, libraries=measured,
        met=measured["this tree"]["added_cpu_ms"] <= GOAL_MS,
        load_average=dict(before=[round(x, 2) for x in load_before],
                          after=[round(x, 2) for x in load_after]),
        code=code_info(None), machine=machine_info(()),
        when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"python -c pass: median {baseline['median_cpu_ms']:.1f} ms CPU, "
          f"{baseline['median_wall_ms']:.1f} ms wall ({args.runs} runs)")
    for name, timed in measured.items():
        print(f"import bytepair ({name}): adds {timed['added_cpu_ms']:.1f} ms CPU, "
              f"{timed['added_wall_ms']:.1f} ms wall (medians)")
    print(f"load average {load_before[0]:.1f} -> {load_after[0]:.1f}; wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
