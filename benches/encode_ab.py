"""One-thread encoding, side by side: bytepair builds (before and after a change), gigatoken, tiktoken.

Every case is a fresh process, and the cases run back to back in turn,
``--repeats`` times, so that all of them meet the same load on a shared
machine. Each process loads the model, encodes the held-out English text of
``benches.encode`` once (first: cold piece cache) and then best of
``--rounds`` (warm), and reports wall and CPU seconds; the CPU seconds
(``time.process_time``) say less about other programs' load than wall time::

    python -m benches.encode_ab --bytepair before=/path/to/old/src after=src
    python -m benches.encode_ab --bytepair now=src --patterns o200k --repeats 5

Results go to ``benches/results/encode-ab.json`` (``--output``): per case
and pattern, the best first and warm MB/s over the repeats (wall and CPU), and
whether each library gave bytepair's IDs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from benches import corpus, encode

RESULTS = Path(__file__).parent / "results"


def child(library: str, pattern: str, held_out: int, rounds: int) -> dict:
    """One case in this process: ``library`` is bytepair, gigatoken or tiktoken."""
    import bytepair
    from bytepair.formats import export

    text = encode.held_out_text(held_out)
    model = encode.train_model(pattern)
    tok = bytepair.load(model)
    if library == "bytepair":
        run = tok.encode_ordinary
    elif library == "gigatoken":
        json_path = model.with_suffix(".tokenizer.json")
        if not json_path.exists():
            export.to_tokenizers_json(tok, json_path)
        giga = encode._gigatoken(json_path)
        run = lambda t: giga.encode(t).tolist()  # noqa: E731  (lists, as the others return)
    else:
        run = export.tiktoken_encoding(tok).encode_ordinary
    out = {}
    for name, repeat in (("first", 1), ("warm", rounds)):
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            ids = run(text)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        out[name] = {"wall_s": min(walls), "cpu_s": min(cpus)}
    out["mb"] = len(text.encode("utf-8")) / 1e6
    if library != "bytepair":
        out["same_ids"] = ids == bytepair.load(model).encode_ordinary(text)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.encode_ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytepair", nargs="+", default=["now=src"], metavar="NAME=SRC",
                        help="bytepair builds to compare: a name and the src folder that holds it")
    parser.add_argument("--patterns", nargs="+", default=["cl100k", "o200k"])
    parser.add_argument("--held-out", default="5MB")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS / "encode-ab.json"))
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "PATTERN"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    held_out = corpus.parse_size(args.held_out)
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], held_out, args.rounds)))
        return 0
    builds = dict(item.split("=", 1) for item in args.bytepair)
    cases = [(name, "bytepair", str(Path(src).resolve())) for name, src in builds.items()]
    first_src = cases[0][2]
    cases += [("gigatoken", "gigatoken", first_src), ("tiktoken", "tiktoken", first_src)]
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "commit": encode._commit(),
              "load_average_at_start": os.getloadavg(), "cpus": os.cpu_count(),
              "builds": builds, "units": "MB/s of UTF-8 input, best over repeats", "patterns": {}}
    for pattern in args.patterns:
        encode.train_model(pattern)
        runs: dict = {name: [] for name, _, _ in cases}
        for _ in range(args.repeats):
            for name, library, src in cases:
                env = dict(os.environ, PYTHONPATH=src, RAYON_NUM_THREADS="1")
                done = subprocess.run([sys.executable, "-m", "benches.encode_ab", "--child", library, pattern,
                                       "--held-out", args.held_out, "--rounds", str(args.rounds)],
                                      capture_output=True, text=True, env=env, check=False)
                if done.returncode:
                    sys.stderr.write(done.stderr)
                    return 1
                runs[name].append(json.loads(done.stdout))
        entry = {}
        for name, results in runs.items():
            mb = results[0]["mb"]
            entry[name] = {f"{kind}_{clock}": round(mb / min(r[kind][f"{clock}_s"] for r in results), 2)
                           for kind in ("first", "warm") for clock in ("wall", "cpu")}
            if "same_ids" in results[0]:
                entry[name]["same_ids"] = all(r["same_ids"] for r in results)
            print(f"{pattern} {name}: {entry[name]}", file=sys.stderr)
        entry["load_average_after"] = os.getloadavg()
        report["patterns"][pattern] = entry
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
