"""What parity-aware BPE buys and costs: plain BPE against parity ``base`` at equal vocab.

Both train on the same text, Debian's translation catalogs in eight languages
(:func:`benches.corpus.catalogs`, one message per line): plain BPE on all of it at
once, parity ``base`` per language with the parallel dev set. Both are evaluated
(:func:`bytepair.evaluate`) on the parallel *held-out* set, the same messages in
every language, and the script records, per model:

- each language's tokens relative to English's (``parity``);
- the Gini coefficient of the per-language token counts (evaluate's
  ``gini_tokens``: on parallel text, the spread of the cost of the same content),
  and its Gini of tokens per byte (``gini_per_byte``);
- global bytes per token: all held-out bytes over all held-out tokens.

    python -m benches.parity_eval --vocab-size 8192 --vocab-size 32768
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from benches.parity import LOCALES

RESULTS = Path(__file__).resolve().parent / "results" / "parity-eval.json"


def compare(data: Path, vocab_size: int) -> dict:
    import bytepair
    train = {loc: str(data / "train" / f"{loc}.txt") for loc in LOCALES}
    start = time.perf_counter()
    models = {
        "plain": bytepair.train([Path(p) for p in train.values()], vocab_size=vocab_size,
                                per_line=True, progress=False),
        "parity-base": bytepair.train(train, vocab_size=vocab_size, parity="base",
                                      dev={loc: str(data / "dev" / f"{loc}.txt") for loc in LOCALES},
                                      per_line=True, progress=False),
    }
    train_seconds = time.perf_counter() - start
    heldout = {loc: str(data / "heldout" / f"{loc}.txt") for loc in LOCALES}
    table = bytepair.evaluate(models, heldout, reference="en", per_line=True)
    row: dict = {"vocab_size": vocab_size, "train_seconds": train_seconds}
    for name in models:
        rows = [r for r in table.rows if r["model"] == name and r["vocab_size"] == vocab_size]
        (parity,) = [p for p in table.parity
                     if p["model"] == name and p["vocab_size"] == vocab_size]
        tokens = {r["sample"]: r["tokens"] for r in rows}
        total_bytes = sum(s["bytes"] for s in table.samples)
        row[name] = {
            "parity": parity["parity"],
            "gini_tokens": parity["gini_tokens"],
            "gini_per_byte": parity["gini"],
            "bytes_per_token": total_bytes / sum(tokens.values()),
            "tokens": tokens,
        }
    plain, fair = row["plain"], row["parity-base"]
    row["gini_tokens_change"] = fair["gini_tokens"] / plain["gini_tokens"] - 1
    row["bytes_per_token_change"] = fair["bytes_per_token"] / plain["bytes_per_token"] - 1
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab-size", type=int, action="append")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    from benches import corpus

    data = corpus.catalogs(LOCALES)
    rows = []
    for size in args.vocab_size or [8192]:
        row = {"load_before": os.getloadavg(), **compare(data, size)}
        print(json.dumps(row))
        rows.append(row)
    if not args.no_save:
        manifest = json.loads((data / "manifest.json").read_text())
        RESULTS.write_text(json.dumps({"command": "python -m benches.parity_eval " + " ".join(
            argv if argv is not None else sys.argv[1:]), "data": manifest, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
