"""Pieces seen once: how much of the engine they fill, and how soon a rule touches them.

    python -m benches.first_touch --size 100MB
    python -m benches.first_touch --size 1GB

Trains GPT-2-split BPE on the size ladder's corpus of ``--size`` (one
document per line, vocabulary ``--vocab``) and counts its pieces. For the
pieces seen once (the lightest sequences of the pair engine), it reports
their share of the distinct pieces and of the positions the engine lays
out, and the share of their bytes that no rule has touched after the first
k rules. A piece no rule has touched is still its raw bytes, so that share
is what keeping such pieces as one byte a token (until a merge reaches
them) could save at rule k. The first rule to touch a piece joins two
bytes next to each other in it, so it is the lowest-ranked rule of two
bytes among the piece's byte pairs. Results go to
``benches/results/first-touch-<--size>.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

from . import corpus as corpora
from .harness import ROOT, save_result
from .ladder import corpus_for

NEVER = 1 << 62
AFTER = (10, 100, 1000, 10000)


def first_touch(data: bytes, starts, counts, rank_of_bytes: dict[int, int]) -> tuple[list, int, int]:
    """``(ranks, once_bytes, all_bytes)``: per piece seen once with two bytes or more,
    ``(rank of the first rule that touches it, its length)``."""
    touched = []
    once_bytes = 0
    for i, count in enumerate(counts):
        if count != 1:
            continue
        piece = data[starts[i]:starts[i + 1]]
        once_bytes += len(piece)
        if len(piece) < 2:
            continue
        first = min(rank_of_bytes.get(piece[j] << 8 | piece[j + 1], NEVER)
                    for j in range(len(piece) - 1))
        touched.append((first, len(piece)))
    return touched, once_bytes, len(data)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)

    import bytepair

    path = corpus_for(corpora.parse_size(args.size))
    clock = time.perf_counter()
    tokenizer = bytepair.train(path, vocab_size=args.vocab, pretokenize="gpt2", per_line=True,
                               workers=args.threads, progress=False)
    rank_of_bytes = {m.left << 8 | m.right: m.rank for m in tokenizer.merges
                     if m.left < 256 and m.right < 256}
    counts = bytepair.count(bytepair.Files(path, per_line=True), workers=args.threads,
                            progress=False)
    data, starts, weights = counts.flat()
    touched, once_bytes, all_bytes = first_touch(data, starts, weights, rank_of_bytes)
    once = sum(1 for w in weights if w == 1)
    pieces = len(weights)
    long_bytes = sum(length for _, length in touched)
    untouched = {str(k): round(sum(length for rank, length in touched if rank >= k) / long_bytes, 4)
                 for k in AFTER + (len(tokenizer.merges),)}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    result = {
        "command": f"python -m benches.first_touch --size {args.size}",
        "commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "corpus": {"path": path.name, "bytes": path.stat().st_size},
        "vocab": args.vocab, "rules": len(tokenizer.merges),
        "distinct_pieces": pieces, "distinct_bytes": all_bytes,
        "once_share_of_pieces": round(once / pieces, 4),
        # The engine lays out one slot a byte and one a sequence end.
        "once_share_of_slots": round((once_bytes + once) / (all_bytes + pieces), 4),
        "once_bytes_untouched_after_rules": untouched,
        "seconds": round(time.perf_counter() - clock, 1),
        "cpus": os.cpu_count(),
    }
    save_result(result, f"first-touch-{args.size}", not args.no_write)


if __name__ == "__main__":
    main()
