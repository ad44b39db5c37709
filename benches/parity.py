"""Parity-aware BPE against Hugging Face's ParityBpeTrainer: equal rules, time, peak RSS.

Text: by default Debian's translation catalogs (:func:`benches.corpus.catalogs`):
training text, a parallel dev set and a parallel held-out set per language. ``--data
DIR`` takes any directory laid out the same way (``train/LOCALE.txt``,
``dev/LOCALE.txt``, one document per line; ``manifest.json`` is recorded when there
is one), ``--locales`` its languages. Each trainer runs in a fresh process
(``python -m benches.parity --worker ...``), back to back; the time is the training
call (reading, splitting, counting and merging; the worker reads the lines for
``tokenizers`` before the clock starts, and each worker first trains on a few bytes so
that its modules are loaded), the peak is the worker's RSS. The load average is
recorded before and after each worker.

    python -m benches.parity --merges 32512 --variant base --variant window --variant ratio
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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
        start = time.perf_counter()
        tok = _tokenizers_rules(train, dev, [ratios[loc] for loc in locales] if ratios else None,
                                merges, kind)
        seconds = time.perf_counter() - start
        merges_out = json.loads(tok.to_str())["model"]["merges"]
    else:
        from bytepair.formats.export import tokenizers_json

        start = time.perf_counter()
        tok = _bytepair_rules(data, locales, ratios, merges, kind)
        seconds = time.perf_counter() - start
        merges_out = tokenizers_json(tok)["model"]["merges"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.write_text(json.dumps({"seconds": seconds, "peak_mib": peak, "merges": merges_out}))


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
    parser.add_argument("--worker", nargs=3, metavar=("TRAINER", "VARIANT", "OUT"))
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
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
    rows = []
    for variant in args.variant or ["base"]:
        row = {"variant": variant, "merges": args.merges, "load_before": os.getloadavg()}
        runs = [("bytepair", "bytepair", None), ("tokenizers", "tokenizers", None)]
        if args.baseline is not None:
            root = Path(__file__).resolve().parent.parent
            runs.insert(0, ("baseline", "bytepair",
                            {**os.environ, "PYTHONPATH": f"{args.baseline}{os.pathsep}{root}"}))
        for name, trainer, env in runs:
            out = Path(f"/tmp/parity-bench-{os.getpid()}-{name}.json")
            subprocess.run([sys.executable, "-m", "benches.parity", "--merges", str(args.merges),
                            "--data", str(data), "--locales", ",".join(locales),
                            "--worker", trainer, variant, str(out)], check=True, env=env)
            row[name] = json.loads(out.read_text())
            row[name]["load_after"] = os.getloadavg()
            out.unlink()
        if "baseline" in row:
            row["baseline"]["equal_rules"] = row["baseline"].pop("merges") == row["bytepair"]["merges"]
        same = row["bytepair"].pop("merges") == row["tokenizers"].pop("merges")
        row.update(equal_rules=same,
                   time_ratio=row["bytepair"]["seconds"] / row["tokenizers"]["seconds"],
                   peak_ratio=row["bytepair"]["peak_mib"] / row["tokenizers"]["peak_mib"])
        print(json.dumps(row), flush=True)
        rows.append(row)
    if not args.no_save:
        manifest_path = data / "manifest.json"
        manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else None
        args.out.write_text(json.dumps({"command": "python -m benches.parity " + " ".join(
            argv if argv is not None else sys.argv[1:]), "locales": locales, "data": manifest,
            "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
