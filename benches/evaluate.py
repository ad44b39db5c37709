"""Evaluation against tokenization-scorer and tiktoken, and vocabulary-size curves.

One command trains (once, cached) a 65,536-token model on the first 10 MB of
the English corpus and runs each case in a fresh process:

* ``equal``: on held-out text (the lines after the training text, 10 MB by
  default), ``bytepair.evaluate``'s token count and bytes per token against
  counting tiktoken's tokens (the model exported to tiktoken), and its Rényi
  efficiency (order 2.5) against ``tokenization_scorer.score`` fed the same
  token lists. Times: the whole ``evaluate`` (reading and encoding the text
  included) and the metrics from the IDs alone, against the scorer's time on
  the token lists (their making not included).
* ``sizes``: ``bytepair evaluate MODEL --sample HELD-OUT --sizes ...`` with 16
  sizes, as a subprocess, on 100 MB of held-out text (whole-file document),
  wall time, and the same with the full size only for comparison.

::

    python -m benches.evaluate                       # both cases
    python -m benches.evaluate --held-out 2MB --sizes-held-out 20MB

Results go to ``benches/results/evaluate.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

from benches import corpus
from benches.encode import _commit

RESULTS = Path(__file__).parent / "results"
VOCAB = 65536
TRAIN = "10MB"
PATTERN = "cl100k"
#: Sixteen sizes from 4096 to the full 65536.
SIZES = [4096 * k for k in range(1, 17)]


def model_path() -> Path:
    """The 65,536-token model, trained on the first 10 MB once and cached."""
    import bytepair

    path = corpus.cache_dir() / "models" / f"evaluate-{PATTERN}-{VOCAB}-{TRAIN}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        tok = bytepair.train(corpus.corpus_path(TRAIN), vocab_size=VOCAB, pretokenize=PATTERN,
                             per_line=True, progress=False)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tok.save(tmp)
        os.replace(tmp, path)
        print(f"trained {path.name} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def held_out_path(size: int) -> Path:
    """``size`` bytes (whole lines) that follow the training text, as a file (cached)."""
    path = corpus.cache_dir() / f"evaluate-held-out-{size}.txt"
    if path.exists():
        return path
    # The whole English recipe (its 10 MB corpus is this file's prefix): 100 MB after it.
    source = corpus._english_all()
    start = corpus.parse_size(TRAIN)
    with open(source, "rb") as f:
        f.seek(start)
        data = f.read(size + 100_000)
    data = data[data.index(b"\n") + 1:]
    if len(data) < size:
        raise SystemExit(f"only {len(data):,} bytes of held-out text after the training text")
    data = data[:data.rindex(b"\n", 0, size) + 1]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


def child_equal(held_out: int) -> dict:
    """The ``equal`` case: same numbers as the peers, and the times."""
    import tiktoken  # noqa: F401  (imported before timing)
    import tokenization_scorer

    import bytepair
    from bytepair.evaluation import metrics
    from bytepair.formats import export
    from bytepair.model import codec

    tok = bytepair.load(model_path())
    path = held_out_path(held_out)
    text = path.read_text("utf-8")
    lines = text.splitlines(keepends=True)
    enc = export.tiktoken_encoding(tok)
    out: dict = {"held_out_bytes": len(text.encode("utf-8")), "documents": len(lines)}

    started = time.perf_counter()
    table = bytepair.evaluate(tok, {"held-out": lines}, threads=2)
    out["bytepair_evaluate_s"] = time.perf_counter() - started
    row = table.rows[0]

    tiktoken_lists = enc.encode_ordinary_batch(lines, num_threads=2)
    tiktoken_tokens = sum(map(len, tiktoken_lists))
    out["tokens"] = {"bytepair": row["tokens"], "tiktoken": tiktoken_tokens}
    out["bytes_per_token"] = {"bytepair": row["bytes_per_token"],
                              "tiktoken": out["held_out_bytes"] / tiktoken_tokens}
    scorer_input = [[str(token) for token in ids] for ids in tiktoken_lists if ids]
    started = time.perf_counter()
    scorer = tokenization_scorer.score(scorer_input, metric="renyi", power=2.5)
    out["scorer_s"] = time.perf_counter() - started
    out["renyi"] = {"bytepair": row["renyi"], "tokenization_scorer": float(scorer)}

    # The metrics alone, from the same IDs as an array (what evaluate does after encoding).
    ids = tok.encode_to_array(lines, threads=2, disallowed_special=())
    started = time.perf_counter()
    counts = codec.count_ids(ids, tok.model.vocab_size)
    metrics.renyi_efficiency(counts)
    sum(1 for c in counts if c)
    out["bytepair_metrics_from_ids_s"] = time.perf_counter() - started
    return out


def run_cli(model: Path, held_out: Path, sizes: list[int] | None) -> dict:
    """``bytepair evaluate`` as a subprocess: wall time and its JSON."""
    argv = [sys.executable, "-m", "bytepair", "evaluate", str(model), "--sample", str(held_out),
            "--threads", "2", "--json"]
    if sizes:
        argv += ["--sizes", ",".join(map(str, sizes))]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(done.stderr)
    table = json.loads(done.stdout)
    # CPU seconds do not grow with the machine's load as wall time does: on a shared
    # machine they tell what an idle one would take (at best cpu / 2 on two cores).
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "load_average_after": os.getloadavg(),
            "sizes": len(table["rows"]),
            "bytes_per_token": {r["vocab_size"]: r["bytes_per_token"] for r in table["rows"]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.evaluate",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--held-out", default="10MB", help="held-out text of the equal case (10MB)")
    parser.add_argument("--sizes-held-out", default="100MB",
                        help="held-out text of the sizes case (100MB)")
    parser.add_argument("--cases", nargs="+", default=["equal", "sizes"])
    parser.add_argument("--output", default=str(RESULTS / "evaluate.json"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpus.apply_fetch_option(args)
    held_out = corpus.parse_size(args.held_out)
    if args.child:
        print(json.dumps(child_equal(held_out)))
        return 0
    model = model_path()
    report = {"commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(),
                          "load_average_at_start": os.getloadavg()},
              "model": {"vocab_size": VOCAB, "train": TRAIN, "pattern": PATTERN}, "cases": {},
              "goals": {}}
    if "equal" in args.cases:
        held_out_path(held_out)
        done = subprocess.run([sys.executable, "-m", "benches.evaluate", "--child",
                               "--held-out", args.held_out], capture_output=True, text=True,
                              check=False)
        if done.returncode:
            sys.stderr.write(done.stderr)
            return 1
        equal = json.loads(done.stdout)
        report["cases"]["equal"] = equal
        speed = equal["scorer_s"] / equal["bytepair_evaluate_s"]
        report["goals"]["renyi_equal_to_tokenization_scorer"] = {
            "met": abs(equal["renyi"]["bytepair"] - equal["renyi"]["tokenization_scorer"]) <= 1e-12}
        report["goals"]["tokens_equal_to_tiktoken"] = {
            "met": equal["tokens"]["bytepair"] == equal["tokens"]["tiktoken"]}
        report["goals"]["evaluate_vs_tokenization_scorer"] = {
            "ratio": round(speed, 2), "goal": ">= 20", "met": speed >= 20,
            "note": "whole evaluate (reading and encoding included) against the scorer on "
                    "token lists already made"}
        print(f"equal: {json.dumps(equal)}", file=sys.stderr)
    if "sizes" in args.cases:
        path = held_out_path(corpus.parse_size(args.sizes_held_out))
        one = run_cli(model, path, None)
        sixteen = run_cli(model, path, SIZES)
        report["cases"]["sizes"] = {"held_out_bytes": path.stat().st_size, "full_size_only": one,
                                    "sixteen_sizes": sixteen}
        report["goals"]["sixteen_sizes_wall_s"] = {
            "value": round(sixteen["wall_s"], 2), "goal": "<= 10", "met": sixteen["wall_s"] <= 10,
            "held_out_bytes": path.stat().st_size}
        report["goals"]["sixteen_sizes_wall_s"]["cpu_s"] = round(sixteen["cpu_s"], 2)
        print(f"sizes: one size {one['wall_s']:.2f} s ({one['cpu_s']:.2f} CPU s), "
              f"16 sizes {sixteen['wall_s']:.2f} s ({sixteen['cpu_s']:.2f} CPU s)", file=sys.stderr)
    report["machine"]["load_average_after"] = os.getloadavg()
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
