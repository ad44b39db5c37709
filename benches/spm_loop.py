"""The sentencepiece merge loop alone (everything after counting): time per phase and peak RSS.

The corpus's word table is counted once with bytepair's counting and kept as a pickle
beside the corpus in /tmp; each repeat then loads it in a fresh process and times the
loop's phases, as :func:`bytepair.training.sentencepiece.pieces_from_words` runs them:

* ``read``: the table read into the loop's array, the table emptied as it is read;
* ``chars``: the kept characters (character coverage);
* ``lay_out``: characters to IDs, the first pairs and their positions;
* ``learn``: the merges.

``peak_rss_mib`` is the process's peak, ``table_rss_mib`` its RSS with the table loaded
(before the loop): the loop's own memory is the difference. The load average is recorded
before and after each repeat; the pieces' digest shows that every run made the same ones.

    python -m benches.spm_loop --corpus ~/.cache/bytepair-bench/english-v1-100000000.txt \\
        --vocab-size 32000 --config llama2 --note "what this run measures"
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path

from .sentencepiece import CONFIGS

RESULTS = Path(__file__).resolve().parent / "results" / "spm-loop.json"


def _options(vocab_size: int, config: str):
    from bytepair.training.sentencepiece import SentencePieceOptions

    return SentencePieceOptions.of(vocab_size=vocab_size, **CONFIGS[config])


def table_path(corpus: str, config: str) -> Path:
    """The pickled word table of ``corpus`` under ``config``, counted on first use."""
    source = Path(corpus).expanduser()
    path = Path("/tmp") / f"spm-words-{source.stem}-{config}-{source.stat().st_size}.pkl"
    if not path.exists():
        from bytepair.counts.spm_words import count_sentencepiece_words

        words, _ = count_sentencepiece_words([source], _options(8000, config).text_rules(), workers=2)
        partial = path.with_suffix(".partial")
        partial.write_bytes(pickle.dumps(dict(words), protocol=5))
        partial.replace(path)
    return path


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker(table: str, vocab_size: int, config: str) -> dict:
    """One run in this process: the phases' seconds, the pieces' digest, the RSS figures."""
    from bytepair.learn.spm_chars import required_chars
    from bytepair.learn.spm_loop import CompiledWords

    options = _options(vocab_size, config)
    words = pickle.loads(Path(table).read_bytes())
    table_rss = _rss_mib()
    seconds = {}
    start = time.perf_counter()
    try:
        held = CompiledWords(words, options.piece_rules(), release=True)
    except TypeError:  # a loop from before ``release``: the table is emptied once read
        held = CompiledWords(words, options.piece_rules())
        words.clear()
    seconds["read"] = time.perf_counter() - start
    kept = [char for char, _ in required_chars(words, options.character_coverage, held.char_counts)]
    seconds["chars"] = time.perf_counter() - start - sum(seconds.values())
    room = vocab_size - len(options.meta_pieces()) - len(kept)
    if hasattr(held, "lay_out"):
        held.lay_out(kept)
        seconds["lay_out"] = time.perf_counter() - start - sum(seconds.values())
        pieces = [piece.decode("utf-8", "surrogatepass") for piece in held._loop.learn(room)]
    else:  # a loop from before lay_out was its own step: lay_out and learn timed as one
        pieces = held.learn(kept, room)
    seconds["learn"] = time.perf_counter() - start - sum(seconds.values())
    sizes = held._loop.stats() if hasattr(held._loop, "stats") else {}
    return {"seconds": round(sum(seconds.values()), 2), "sizes": sizes, "phases": {k: round(v, 2) for k, v in seconds.items()},
            "cpu_seconds": round(time.process_time(), 2), "pieces": len(pieces),
            "digest": hashlib.sha256(repr(pieces).encode()).hexdigest()[:16],
            "table_rss_mib": round(table_rss, 1),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def run(corpus: str, vocab_size: int, config: str, repeats: int) -> dict:
    table = table_path(corpus, config)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent).stdout.strip()
    out: dict = {"corpus": corpus, "vocab_size": vocab_size, "config": config, "commit": commit,
                 "cpus": os.cpu_count(), "runs": []}
    for _ in range(repeats):
        before = os.getloadavg()[0]
        result = subprocess.run([sys.executable, "-m", "benches.spm_loop", "--worker", str(table),
                                 "--vocab-size", str(vocab_size), "--config", config],
                                capture_output=True, text=True, check=True)
        row = json.loads(result.stdout.strip().splitlines()[-1])
        row.update(load_before=round(before, 2), load_after=round(os.getloadavg()[0], 2))
        out["runs"].append(row)
        print(row, file=sys.stderr)
    best = min(out["runs"], key=lambda row: row["seconds"])
    out.update(best_seconds=best["seconds"], best_phases=best["phases"],
               peak_rss_mib=max(row["peak_rss_mib"] for row in out["runs"]),
               same_pieces=len({row["digest"] for row in out["runs"]}) == 1)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", help="the text file whose word table the loop learns from")
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--config", choices=list(CONFIGS), default="llama2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--note", default="", help="what this run measures (kept with the results)")
    parser.add_argument("--worker", metavar="TABLE", help=argparse.SUPPRESS)
    parser.add_argument("--results", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.vocab_size, args.config)))
        return
    if not args.corpus:
        parser.error("--corpus: required (the text file to learn from)")
    result = dict(run(args.corpus, args.vocab_size, args.config, args.repeats), note=args.note)
    path = Path(args.results)
    runs = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps(runs + [result], indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
