"""Parity-aware BPE against Hugging Face's ParityBpeTrainer: equal rules, time, peak RSS.

Text: by default Debian's translation catalogs (:func:`benches.corpus.catalogs`):
training text, a parallel dev set and a parallel held-out set per language. ``--data
DIR`` takes any directory laid out the same way (``train/LOCALE.txt``,
``dev/LOCALE.txt``, one document per line; ``manifest.json`` is recorded when there
is one), ``--locales`` its languages. Each trainer runs in a fresh process
(``python -m benches.parity --worker ...``), back to back; the time is the training
call (reading, splitting, counting and merging; the worker reads the lines for
``tokenizers`` before the clock starts, and each worker first trains on a few bytes so
that its modules are loaded), the peak is the worker's RSS; ``cpu_seconds`` is the
training call's CPU time (user and system, the worker's and its children's). The load
average is recorded before and after each worker.

    python -m benches.parity --merges 32512 --variant base --variant window --variant ratio

Not slower than an older bytepair: ``--baseline OLD/src`` runs it beside this tree's,
``--turns N`` runs both N times per variant, taking turns (each run in a fresh process,
its seconds, peak, load and whether its rules equal this tree's all recorded; the row holds
the median and the minimum), ``--no-peer`` leaves out ``tokenizers``::

    python -m benches.parity --variant base --baseline OLD/src --turns 3 --no-peer
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOCALES = ["en", "fr", "de", "ru", "uk", "zh_CN", "ja", "el"]  # Latin, Cyrillic, Han/Kana, Greek
RESULTS = Path(__file__).resolve().parent / "results" / "parity.json"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().split("\n") if line]


def _ratios(data: Path, locales: list[str]) -> dict[str, float]:
    """Targets proportional to each language's length on parallel text (as tokenizers' doc
    advises): dev bytes over the first language's."""
    first = (data / "dev" / f"{locales[0]}.txt").stat().st_size
    return {loc: (data / "dev" / f"{loc}.txt").stat().st_size / first for loc in locales}


def _tokenizers_rules(train: list, dev: list, ratio: list | None, merges: int, kind: str):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t = trainers.ParityBpeTrainer(num_merges=merges, variant=kind, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    extra = {"ratio": ratio} if ratio is not None else {"dev_iterators": [iter(d) for d in dev]}
    t.train_from_iterator(tok, [iter(x) for x in train], **extra)
    return tok


def _bytepair_rules(data: Path, locales: list[str], ratio: dict | None, merges: int, kind: str):
    import bytepair

    extra = ({"ratio": ratio} if ratio is not None
             else {"dev": {loc: str(data / "dev" / f"{loc}.txt") for loc in locales}})
    return bytepair.train({loc: str(data / "train" / f"{loc}.txt") for loc in locales},
                          merges=merges, parity=kind, ties="tokenizers", per_line=True,
                          progress=False, **extra)


def _cpu() -> float:
    """CPU seconds (user and system) of this process and of its children waited for: less
    swayed than the clock by other work on the machine."""
    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


def worker(trainer: str, variant: str, merges: int, data: Path, out: Path,
           locales: list[str] = LOCALES) -> None:
    kind = "window" if variant == "window" else "base"
    ratios = _ratios(data, locales) if variant == "ratio" else None
    # Warm-up: one tiny training first, so that the clock times training, not loading
    # modules (where PYTHONDONTWRITEBYTECODE is set, each import compiles its source).
    with tempfile.TemporaryDirectory() as tiny:
        for part, text in (("train", "ab ab abc\n"), ("dev", "ab\n")):
            (Path(tiny) / part).mkdir()
            for loc in locales:
                (Path(tiny) / part / f"{loc}.txt").write_text(text)
        tiny_ratio = dict.fromkeys(locales, 1.0) if ratios is not None else None
        if trainer == "tokenizers":
            _tokenizers_rules([["ab ab abc"]] * len(locales), [["ab"]] * len(locales),
                              list(tiny_ratio.values()) if tiny_ratio else None, 2, kind)
        else:
            _bytepair_rules(Path(tiny), locales, tiny_ratio, 2, kind)
    if trainer == "tokenizers":
        train = [_lines(data / "train" / f"{loc}.txt") for loc in locales]
        dev = [_lines(data / "dev" / f"{loc}.txt") for loc in locales]
        start, cpu = time.perf_counter(), _cpu()
        tok = _tokenizers_rules(train, dev, [ratios[loc] for loc in locales] if ratios else None,
                                merges, kind)
        seconds, cpu = time.perf_counter() - start, _cpu() - cpu
        merges_out = json.loads(tok.to_str())["model"]["merges"]
    else:
        from bytepair.formats.export import tokenizers_json

        start, cpu = time.perf_counter(), _cpu()
        tok = _bytepair_rules(data, locales, ratios, merges, kind)
        seconds, cpu = time.perf_counter() - start, _cpu() - cpu
        merges_out = tokenizers_json(tok)["model"]["merges"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.write_text(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "peak_mib": peak,
                                "merges": merges_out}))


def _run(name: str, trainer: str, variant: str, args, data: Path, locales: list[str],
         env: dict | None) -> dict:
    """One training in a fresh process: its seconds, peak and merges, the load before and after."""
    out = Path(f"/tmp/parity-bench-{os.getpid()}-{name}.json")
    load_before = os.getloadavg()
    subprocess.run([sys.executable, "-m", "benches.parity", "--merges", str(args.merges),
                    "--data", str(data), "--locales", ",".join(locales),
                    "--worker", trainer, variant, str(out)], check=True, env=env)
    run = json.loads(out.read_text())
    out.unlink()
    return {**run, "load_before": load_before, "load_after": os.getloadavg()}


def _turns(versions: list[tuple[str, dict | None]], variant: str, args, data: Path,
           locales: list[str]) -> tuple[dict, list]:
    """Each version ``args.turns`` times, taking turns, the first version of a turn leading the
    next (A B, B A, A B, ...: a load that drifts weighs on both alike). Every run's rules are
    compared with the first run of "bytepair". Returns the summaries by version (``seconds``
    the median, ``min_seconds``, ``peak_mib`` the largest, ``equal_rules`` for every run) and
    the runs in the order they ran."""
    runs, reference = [], None
    for turn in range(args.turns):
        for name, env in versions if turn % 2 == 0 else versions[::-1]:
            run = _run(name, "bytepair", variant, args, data, locales, env)
            merges = run.pop("merges")
            reference = merges if reference is None and name == "bytepair" else reference
            runs.append({"version": name, "turn": turn + 1, **run, "merges": merges})
    for run in runs:
        run["equal_rules"] = run.pop("merges") == reference
    summary = {}
    for name, _ in versions:
        mine = [run for run in runs if run["version"] == name]
        summary[name] = {"seconds": statistics.median(run["seconds"] for run in mine),
                         "min_seconds": min(run["seconds"] for run in mine),
                         "cpu_seconds": statistics.median(run["cpu_seconds"] for run in mine),
                         "min_cpu_seconds": min(run["cpu_seconds"] for run in mine),
                         "peak_mib": max(run["peak_mib"] for run in mine),
                         "equal_rules": all(run["equal_rules"] for run in mine),
                         "runs": len(mine)}
    if "baseline" in summary:  # above 1: the current version is slower
        summary["against_baseline"] = {
            key: summary["bytepair"][key] / summary["baseline"][key]
            for key in ("seconds", "min_seconds", "cpu_seconds", "min_cpu_seconds", "peak_mib")}
    summary["bytepair"]["merges"] = reference
    return summary, runs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--merges", type=int, default=32_512)
    parser.add_argument("--variant", action="append", choices=("base", "window", "ratio"))
    parser.add_argument("--data", type=Path, help="train/ and dev/ LOCALE.txt (default: the catalogs)")
    parser.add_argument("--locales", help=f"comma-separated (default: {','.join(LOCALES)})")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file")
    parser.add_argument("--baseline", type=Path,
                        help="also time bytepair imported from this source directory (its src/), "
                             "in the same run, as 'baseline'")
    parser.add_argument("--turns", type=int, default=1, metavar="N",
                        help="run bytepair (and the baseline) N times per variant, taking turns, "
                             "each in a fresh process; the row gives the median and the minimum")
    parser.add_argument("--no-peer", action="store_true",
                        help="leave out Hugging Face's ParityBpeTrainer (a not-slower check "
                             "against --baseline)")
    parser.add_argument("--worker", nargs=3, metavar=("TRAINER", "VARIANT", "OUT"))
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    if args.turns < 1:
        parser.error(f"--turns: must be at least 1, got {args.turns}")
    locales = args.locales.split(",") if args.locales else LOCALES
    if args.data is not None:
        data = args.data
    else:
        from benches import corpus

        data = corpus.catalogs(locales)
    if args.worker:
        trainer, variant, out = args.worker
        worker(trainer, variant, args.merges, data, Path(out), locales)
        return 0
    versions = [("bytepair", None)]
    if args.baseline is not None:
        root = Path(__file__).resolve().parent.parent
        versions.insert(0, ("baseline", {**os.environ,
                                         "PYTHONPATH": f"{args.baseline}{os.pathsep}{root}"}))
    rows = []
    for variant in args.variant or ["base"]:
        row = {"variant": variant, "merges": args.merges, "load_before": os.getloadavg()}
        if args.turns == 1:  # the rows as they always were: one run each, its figures
            for name, env in versions:
                row[name] = _run(name, "bytepair", variant, args, data, locales, env)
                del row[name]["load_before"]
            if "baseline" in row:
                row["baseline"]["equal_rules"] = (row["baseline"].pop("merges")
                                                  == row["bytepair"]["merges"])
        else:
            summary, row["runs"] = _turns(versions, variant, args, data, locales)
            row.update(summary)
        if not args.no_peer:
            row["tokenizers"] = _run("tokenizers", "tokenizers", variant, args, data, locales,
                                     None)
            del row["tokenizers"]["load_before"]
            same = row["bytepair"].pop("merges") == row["tokenizers"].pop("merges")
            row.update(equal_rules=same,
                       time_ratio=row["bytepair"]["seconds"] / row["tokenizers"]["seconds"],
                       peak_ratio=row["bytepair"]["peak_mib"] / row["tokenizers"]["peak_mib"])
        row["bytepair"].pop("merges", None)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if not args.no_save:
        manifest_path = data / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else None
        args.out.write_text(json.dumps({"command": "python -m benches.parity " + " ".join(
            argv if argv is not None else sys.argv[1:]), "locales": locales, "data": manifest,
            **_code(args.baseline), "rows": rows}, indent=1))
    return 0


def _code(baseline: Path | None) -> dict:
    """Which libraries ran: this tree's commit, and the baseline's when it is a library
    snapshot (``benches.library``)."""
    from benches.library import code_info

    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "code": code_info(None)}
    if baseline is not None:
        built = (baseline.parent / ".built").exists()
        out["baseline_code"] = code_info(baseline) if built else {"path": str(baseline)}
    return out


if __name__ == "__main__":
    sys.exit(main())
