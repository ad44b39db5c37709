"""sentencepiece BPE: bytepair against spm_train on the same text, equal pieces, time and peak RSS.

Each trainer runs in a fresh process (``python -m benches.sentencepiece --worker NAME``),
back to back, with 2 threads each (spm_train's ``num_threads``, bytepair's ``workers``).
The time is the training call (reading, normalising, counting, merging, writing the
``.model``), with bytepair's counting stage (files -> word table) timed apart
(``count_seconds``, and the peak RSS when it ends), and so is the merge loop's reading of
the word table (``read_seconds``); the peak RSS is the worker's own plus
the largest of its children's (a pure-Python install counts on processes). The load average is recorded before and after each.
The two ``.model`` files are compared piece for piece (piece, score, type).

    python -m benches.sentencepiece --corpus ~/.cache/bytepair-bench/english-v1-100000000.txt \\
        --vocab-size 32000 --config llama2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "sentencepiece.json"
CONFIGS = {
    "defaults": {},
    "llama2": dict(normalization_rule_name="identity", byte_fallback=True, split_digits=True,
                   allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
                   character_coverage=0.99995),
}


def _train(name: str, corpus: str, output: str, vocab_size: int, options: dict) -> None:
    if name == "spm_train":
        import sentencepiece as spm

        prefix = output.removesuffix(".model")
        with open(os.devnull, "w") as quiet:
            spm.SentencePieceTrainer.train(input=corpus, model_prefix=prefix, model_type="bpe",
                                           vocab_size=vocab_size, num_threads=2, logstream=quiet, **options)
    else:
        from bytepair.formats.spm_file import save_sentencepiece
        from bytepair.training.sentencepiece import train_sentencepiece

        save_sentencepiece(train_sentencepiece(corpus, vocab_size=vocab_size, workers=2, **options), output)


def _timed_stages(stages: dict) -> None:
    """Time bytepair's counting stage (files -> word table) inside the training call, and the
    merge loop's reading of the word table (``read_seconds``)."""
    from bytepair.learn import spm_loop
    from bytepair.training import sentencepiece as training

    count = training.count_sentencepiece_words

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return count(*args, **kwargs)
        finally:
            stages["count_seconds"] = round(time.perf_counter() - start, 2)
            stages["count_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    training.count_sentencepiece_words = timed
    held = spm_loop.CompiledWords.__init__

    def timed_read(self, *args, **kwargs):
        start = time.perf_counter()
        held(self, *args, **kwargs)
        stages["read_seconds"] = round(time.perf_counter() - start, 2)

    spm_loop.CompiledWords.__init__ = timed_read


def worker(name: str, corpus: str, output: str, vocab_size: int, config: str) -> dict:
    stages: dict = {}
    if name == "spm_train":
        import sentencepiece  # noqa: F401  (loaded before the clock, as bytepair's modules are)
    else:
        import bytepair.formats.spm_file  # noqa: F401
        import bytepair.training.sentencepiece  # noqa: F401
        _timed_stages(stages)
    start = time.perf_counter()
    _train(name, corpus, output, vocab_size, CONFIGS[config])
    seconds = time.perf_counter() - start
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"seconds": round(seconds, 2), "peak_rss_mib": round(own + children, 1),
            "own_peak_rss_mib": round(own, 1), "children_peak_rss_mib": round(children, 1), **stages}


def _pieces(path: str) -> list[tuple]:
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(Path(path).read_bytes())
    return [(p.piece, p.score, p.type) for p in proto.pieces]


def run(corpus: str, vocab_size: int, config: str) -> dict:
    out: dict = {"corpus": corpus, "corpus_bytes": Path(corpus).stat().st_size, "vocab_size": vocab_size,
                 "config": config, "options": CONFIGS[config], "cpus": os.cpu_count(),
                 "sentencepiece": __import__("sentencepiece").__version__, "runs": {}}
    with tempfile.TemporaryDirectory() as folder:
        models = {}
        for name in ("bytepair", "spm_train"):
            models[name] = str(Path(folder) / f"{name}.model")
            before = os.getloadavg()[0]
            result = subprocess.run([sys.executable, "-m", "benches.sentencepiece", "--worker", name,
                                     "--corpus", corpus, "--vocab-size", str(vocab_size), "--config", config,
                                     "--output", models[name]], capture_output=True, text=True, check=True)
            row = json.loads(result.stdout.strip().splitlines()[-1])
            row.update(load_before=round(before, 2), load_after=round(os.getloadavg()[0], 2))
            out["runs"][name] = row
            print(name, row, file=sys.stderr)
        ours, theirs = _pieces(models["bytepair"]), _pieces(models["spm_train"])
        out["pieces_equal"] = ours == theirs
        out["pieces"] = len(theirs)
        out["digest"] = hashlib.sha256(repr(theirs).encode()).hexdigest()[:16]
    b, s = out["runs"]["bytepair"], out["runs"]["spm_train"]
    out["time_ratio"] = round(b["seconds"] / s["seconds"], 3)
    out["peak_rss_ratio"] = round(b["peak_rss_mib"] / s["peak_rss_mib"], 3)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--config", choices=list(CONFIGS), default="llama2")
    parser.add_argument("--worker", choices=["bytepair", "spm_train"])
    parser.add_argument("--output")
    parser.add_argument("--results", default=str(RESULTS))
    parser.add_argument("--note", default="", help="what this run measures (kept with the results)")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.corpus, args.output, args.vocab_size, args.config)))
        return
    result = run(args.corpus, args.vocab_size, args.config)
    if args.note:
        result["note"] = args.note
    path = Path(args.results)
    runs = json.loads(path.read_text()) if path.exists() else []
    runs.append(result)
    path.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
