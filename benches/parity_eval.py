"""What parity-aware BPE buys and costs: plain BPE against parity-aware variants at equal vocab.

Every model trains on the same text, one line per document, with the default pre-tokenizer:
plain BPE on all languages' training text at once, the parity-aware variants per language with
the parallel dev set. All are evaluated (:func:`bytepair.evaluate`) on the parallel *held-out*
set, the same units in every language, and the script records, per model and size:

- each language's tokens relative to English's (``parity``);
- the Gini coefficient of the per-language token counts (evaluate's ``gini_tokens``: on
  parallel text, the spread of the cost of the same content), and its Gini of tokens per
  byte (``gini_per_byte``);
- global bytes per token, three ways (see docs/parity.md, "What the cost is measured in"):
  ``bytes_per_token``, all held-out bytes of all languages over all their tokens (the same bytes
  for every model, so its change is the inverse change of the total token count);
  ``mean_language_bytes_per_token``, the mean over languages of each one's bytes per token;
  ``mean_line_bytes_per_token``, the mean over every held-out line of every language of its
  bytes over its tokens (the paper's compression rate, averaged over texts).

Data (``--data``): ``parallel`` (:func:`benches.corpus.parallel`: LibreOffice's help and
interface strings and Debian's catalogs as parallel text, 10 MB of training text per
language) or ``catalogs`` (:func:`benches.corpus.catalogs`: the catalogs alone).

Variants (``--variant``, repeatable): ``plain``, ``base``, ``window`` (window 100, alpha 2),
and ``base+global=F`` / ``window+global=F`` (the first F of the merges plain BPE over all
languages, then parity). ``plain`` is trained once at the largest size and truncated to the
others (truncation equals training to the smaller size); the parity-aware variants are trained
at each size (a ``+global`` variant's number of global merges depends on the size).

    python -m benches.parity_eval --data parallel --vocab-size 8192 --vocab-size 32768 \\
        --variant plain --variant base --variant window \\
        --variant base+global=0.25 --variant base+global=0.5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
CATALOG_LOCALES = ["en", "fr", "de", "ru", "uk", "zh_CN", "ja", "el"]
VARIANT = re.compile(r"(plain|base|window)(?:\+global=(0?\.\d+|1(?:\.0*)?))?$")


def _variant(text: str) -> str:
    match = VARIANT.match(text)
    if not match or (match[1] == "plain" and match[2]):
        raise argparse.ArgumentTypeError(
            f"not a variant: {text!r} (plain, base, window, base+global=0.25, ...)")
    return text


def _train(name: str, data: Path, locales: list[str], vocab_size: int):
    import bytepair
    kind, _, share = name.partition("+global=")
    train = {loc: str(data / "train" / f"{loc}.txt") for loc in locales}
    if kind == "plain":
        return bytepair.train([Path(p) for p in train.values()], vocab_size=vocab_size,
                              per_line=True, progress=False)
    extra = {"global_merges": round(float(share) * (vocab_size - 256))} if share else {}
    return bytepair.train(train, vocab_size=vocab_size, parity=kind,
                          dev={loc: str(data / "dev" / f"{loc}.txt") for loc in locales},
                          per_line=True, progress=False, **extra)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def measure(tokenizer, heldout: dict[str, list[str]]) -> dict:
    """Tokens per language and the three global compressions of ``tokenizer`` on ``heldout``."""
    tokens, size, line_ratios = {}, {}, []
    for loc, lines in heldout.items():
        counts = [len(ids) for ids in tokenizer.encode_batch(lines)]
        sizes = [len(line.encode()) for line in lines]
        tokens[loc], size[loc] = sum(counts), sum(sizes)
        line_ratios.extend(b / n for b, n in zip(sizes, counts) if n)
    return {"tokens": tokens, "bytes": size,
            "bytes_per_token": sum(size.values()) / sum(tokens.values()),
            "mean_language_bytes_per_token": sum(size[k] / tokens[k] for k in tokens)
            / len(tokens),
            "mean_line_bytes_per_token": sum(line_ratios) / len(line_ratios)}


def compare(data: Path, locales: list[str], sizes: list[int], variants: list[str]) -> dict:
    import bytepair
    heldout_files = {loc: str(data / "heldout" / f"{loc}.txt") for loc in locales}
    heldout = {loc: _lines(Path(p)) for loc, p in heldout_files.items()}
    largest = max(sizes)
    out: dict = {"models": {}}
    for name in variants:
        # A parity-aware model cannot be truncated (each merge's count is its language's, its
        # replacements all languages': the model check refuses it), so each size is trained.
        per_size = name != "plain"
        for size in (sizes if per_size else [largest]):
            load = os.getloadavg()
            start = time.perf_counter()
            full = _train(name, data, locales, size)
            seconds = time.perf_counter() - start
            for at in ([size] if per_size else sorted(sizes)):
                tok = full if at == full.vocab_size else full.truncate(at)
                table = bytepair.evaluate({name: tok}, heldout_files, reference=locales[0],
                                          per_line=True)
                (parity,) = table.parity
                row = {"train_seconds": round(seconds, 1), "trained_at": size,
                       "load_before": [round(x, 2) for x in load],
                       "parity": parity["parity"], "gini_tokens": parity["gini_tokens"],
                       "gini_per_byte": parity["gini"], **measure(tok, heldout)}
                evaluated = {r["sample"]: r["tokens"] for r in table.rows}
                assert evaluated == row["tokens"], (evaluated, row["tokens"])
                out["models"].setdefault(str(at), {})[name] = row
                print(json.dumps({"vocab_size": at, "model": name,
                                  **{k: row[k] for k in ("gini_tokens", "bytes_per_token",
                                                         "train_seconds")}}), flush=True)
    for at, models in out["models"].items():
        plain = models.get("plain")
        if plain is None:
            continue
        for name, row in models.items():
            if name == "plain":
                continue
            row["change"] = {key: row[key] / plain[key] - 1 for key in (
                "gini_tokens", "bytes_per_token", "mean_language_bytes_per_token",
                "mean_line_bytes_per_token")}
            row["meets_goals"] = (row["change"]["gini_tokens"] <= -0.5
                                  and row["change"]["bytes_per_token"] >= -0.02)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.parity_eval")
    parser.add_argument("--data", choices=("parallel", "catalogs"), default="parallel")
    parser.add_argument("--vocab-size", type=int, action="append")
    parser.add_argument("--variant", type=_variant, action="append")
    parser.add_argument("--output", type=Path,
                        help="results file (default benches/results/parity-eval-DATA.json)")
    parser.add_argument("--no-save", action="store_true")
    from benches import corpus
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpus.apply_fetch_option(args)

    if args.data == "parallel":
        locales = list(corpus.PARALLEL_LOCALES)
        data = corpus.parallel(locales)
    else:
        locales = CATALOG_LOCALES
        data = corpus.catalogs(locales)
    sizes = args.vocab_size or [8192]
    variants = args.variant or ["plain", "base"]
    if "plain" not in variants:
        variants = ["plain", *variants]
    result = compare(data, locales, sizes, variants)
    if not args.no_save:
        manifest = json.loads((data / "manifest.json").read_text())
        command = "python -m benches.parity_eval " + " ".join(
            argv if argv is not None else sys.argv[1:])
        path = args.output or RESULTS / f"parity-eval-{args.data}.json"
        path.write_text(json.dumps({"command": command, "data": manifest, **result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
