"""Encode and decode throughput against tiktoken, Hugging Face tokenizers and gigatoken.

One command trains (once, cached) a 32,768-token model per pattern on the
first 10 MB of the English corpus, exports it to tiktoken and to a
``tokenizer.json``, and times all three libraries on held-out text (the
bytes that follow the training text in the 100 MB corpus, one document per
line), on 1 and 2 threads. Every case runs in a fresh process, so the first
encode really is the first (cold piece cache), and the Rust thread pools get
their thread count before they start::

    python -m benches.encode                          # gpt2, cl100k, o200k
    python -m benches.encode --patterns gpt2 --held-out 2MB
    python -m benches.encode --text multilingual      # Debian's translations, 30+ languages

Results go to ``benches/results/encode.json``: MB/s per case, and the goals

* first ``encode`` >= 2x tiktoken ``encode_ordinary``, one thread;
* ``decode_bytes`` >= tiktoken ``decode_bytes``;
* ``encode_batch`` on 2 threads >= 1.4x on 1 thread;
* a 10x longer single piece costs <= 20x the time.

The libraries must give the same IDs; a case that does not is marked.
gigatoken (when installed) loads the exported ``tokenizer.json`` and runs on
one thread: the whole text with ``encode``, and the lines with
``encode_batch_list(parallel=False)``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benches import corpus

RESULTS = Path(__file__).parent / "results"
VOCAB = 32768
TRAIN = "10MB"
SPECIAL = "<|endoftext|>"
#: Lengths of the single-piece cases ("a" repeated), 10x apart.
LONG_PIECE = (200_000, 2_000_000)
#: tiktoken is quadratic on one long piece: its cases stay short.
TIKTOKEN_PIECE = (10_000, 100_000)


def _model_path(pattern: str, text: str = "english") -> Path:
    name = f"encode-{pattern}-{VOCAB}-{TRAIN}" + ("" if text == "english" else f"-{text}")
    return corpus.cache_dir() / "models" / f"{name}.json"


def _text_path(size: str, text: str) -> Path:
    """The English recipe, or a text of the non-English recipe (``--text``), of ``size``."""
    if text == "english":
        return corpus.corpus_path(size)
    return corpus.corpus_path(size, language=text, clip=True)


def train_model(pattern: str, text: str = "english") -> Path:
    """The model for ``pattern``, trained on the first 10 MB of ``text`` once and cached."""
    import bytepair

    path = _model_path(pattern, text)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        tok = bytepair.train(_text_path(TRAIN, text), vocab_size=VOCAB, pretokenize=pattern,
                             per_line=True, special_tokens=[SPECIAL], progress=False)
        tok.save(path)
        print(f"trained {path.name} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def held_out_text(size: int, text: str = "english") -> str:
    """``size`` bytes (whole lines) that follow the training text in the 100 MB corpus."""
    start = corpus.parse_size(TRAIN)
    with open(_text_path("100MB", text), "rb") as f:
        f.seek(start)
        data = f.read(size + 100_000)
    data = data[data.index(b"\n") + 1:]
    return data[:data.rindex(b"\n", 0, size) + 1].decode("utf-8")


def best(function, rounds: int = 3) -> float:
    """Fastest of ``rounds`` runs, in seconds.

    The result is freed after the clock stops: freeing a million lists is
    not the work being timed (and would count for one library only).
    """
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
        del result
    return min(times)


def _gigatoken(json_path: Path):
    """gigatoken's tokenizer of the exported ``tokenizer.json``, or None when it is not installed."""
    try:
        import gigatoken
    except ImportError:
        return None
    # gigatoken's fast splitters know cl100k as it spells it, ending in
    # ``\s+`` with possessive digits; bytepair writes ``\p{N}{1,3}`` and ``|\s``, which
    # split the same (nothing follows the digits in their branch, and the last branch
    # only ever sees one white-space character). The IDs are compared all the same.
    cl100k = (r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*+"
              r"|\s++$|\s*[\r\n]|\s+(?!\S)|\s")
    spelled = cl100k.replace(r"\p{N}{1,3}|", r"\p{N}{1,3}+|") + "+"
    data = json.loads(json_path.read_text(encoding="utf-8"))
    for step in data["pre_tokenizer"].get("pretokenizers", [data["pre_tokenizer"]]):
        if step.get("type") == "Split" and step["pattern"].get("Regex") == cl100k:
            step["pattern"]["Regex"] = spelled
    return gigatoken.Tokenizer.from_json(json.dumps(data))


def _gigatoken_cases(giga, text: str, lines: list[str], ids: list[int], batch_ids: list,
                     mb: float, rounds: int) -> dict:
    """gigatoken on one thread: the whole text, then the lines as a batch not run in parallel.

    The CPU seconds of all rounds are kept beside each speed: about rounds x the best time
    shows that it ran on one thread.
    """
    out = {}
    for name, run in (("gigatoken_encode", lambda: giga.encode(text)),
                      ("gigatoken_encode_batch_serial",
                       lambda: giga.encode_batch_list(lines, parallel=False))):
        cpu = time.process_time()
        seconds = best(run, rounds)
        out[name] = mb / seconds
        out[name + "_cpu_s_all_rounds"] = time.process_time() - cpu
    out["gigatoken_same_ids"] = giga.encode(text).tolist() == ids
    out["gigatoken_batch_same_ids"] = giga.encode_batch_list(lines, parallel=False) == batch_ids
    return out


def child(model_path: str, threads: int, held_out: int, rounds: int,
          text_name: str = "english") -> dict:
    """All cases of one model and thread count (this process's only job)."""
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    import tiktoken  # noqa: F401  (imported before timing)
    import tokenizers

    import bytepair
    from bytepair.formats import export
    from bytepair.formats.export import to_tokenizers_json

    text = held_out_text(held_out, text_name)
    lines = text.splitlines()
    size = len(text.encode("utf-8"))
    mb = size / 1e6
    tok = bytepair.load(model_path)
    enc = export.tiktoken_encoding(tok)
    json_path = Path(model_path).with_suffix(".tokenizer.json")
    if not json_path.exists():
        to_tokenizers_json(tok, json_path)
    hf = tokenizers.Tokenizer.from_file(str(json_path))
    giga = _gigatoken(json_path)
    out: dict = {"threads": threads, "held_out_bytes": size, "documents": len(lines)}

    def fresh():
        return bytepair.load(model_path)  # cold piece caches

    if threads == 1:
        cold = fresh()
        started = time.perf_counter()
        ids = cold.encode_ordinary(text)
        out["bytepair_encode_first"] = mb / (time.perf_counter() - started)
        out["bytepair_encode_warm"] = mb / best(lambda: cold.encode_ordinary(text), rounds)
        out["tiktoken_encode_ordinary"] = mb / best(lambda: enc.encode_ordinary(text), rounds)
        out["hf_encode"] = mb / best(lambda: hf.encode(text, add_special_tokens=False), rounds)
        out["same_ids"] = (ids == enc.encode_ordinary(text)
                           == hf.encode(text, add_special_tokens=False).ids)
        if giga is not None:
            out.update(_gigatoken_cases(giga, text, lines, ids, cold.encode_batch(lines), mb,
                                        rounds))
        out["bytes_per_token"] = size / len(ids)
        out["bytepair_decode_bytes"] = mb / best(lambda: tok.decode_bytes(ids), rounds)
        out["tiktoken_decode_bytes"] = mb / best(lambda: enc.decode_bytes(ids), rounds)
        out["hf_decode"] = mb / best(lambda: hf.decode(ids, skip_special_tokens=False), rounds)
        assert tok.decode_bytes(ids) == enc.decode_bytes(ids) == text.encode("utf-8")
        for n in LONG_PIECE:
            piece = "a" * n
            out[f"bytepair_piece_{n}_s"] = best(lambda: tok.encode_ordinary(piece), rounds)
        for n in TIKTOKEN_PIECE:
            piece = "a" * n
            out[f"tiktoken_piece_{n}_s"] = best(lambda: enc.encode_ordinary(piece), 1)

    # Batches: a fresh tokenizer per round, so every round starts cold.
    times, cpu = [], []
    batch = array_ids = None
    for _ in range(rounds):
        cold = fresh()
        batch = None  # the last round's lists are freed before the clock starts
        started, cpu_started = time.perf_counter(), time.process_time()
        batch = cold.encode_batch(lines, threads=threads)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    out["bytepair_encode_batch_first"] = mb / min(times)
    # CPU seconds per wall second of the fastest round: above 1 only when the
    # threads really ran at the same time (the machine may be shared).
    out["bytepair_encode_batch_cpu_per_wall"] = cpu[times.index(min(times))] / min(times)
    times, cpu = [], []
    for _ in range(rounds):
        cold = fresh()
        array_ids = None
        started, cpu_started = time.perf_counter(), time.process_time()
        array_ids = cold.encode_to_array(lines, threads=threads)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    out["bytepair_encode_to_array_first"] = mb / min(times)
    out["bytepair_encode_to_array_cpu_per_wall"] = cpu[times.index(min(times))] / min(times)
    out["array_same_ids"] = array_ids.tolist() == [i for ids in batch for i in ids]
    warm = fresh()
    warm.encode_batch(lines, threads=threads)
    out["bytepair_encode_batch_warm"] = mb / best(lambda: warm.encode_batch(lines, threads=threads), rounds)
    out["tiktoken_encode_ordinary_batch"] = mb / best(
        lambda: enc.encode_ordinary_batch(lines, num_threads=threads), rounds)
    out["hf_encode_batch"] = mb / best(
        lambda: hf.encode_batch(lines, add_special_tokens=False), rounds)
    out["batch_same_ids"] = batch == enc.encode_ordinary_batch(lines, num_threads=threads)
    return out


def _commit() -> str:
    if os.environ.get("BYTEPAIR_BENCH_COMMIT"):  # a copy of the tree run outside git
        return os.environ["BYTEPAIR_BENCH_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def goals(cases: dict) -> dict:
    """The four goals (speed against tiktoken, decode, two threads, a long piece) from one
    pattern's cases (threads 1 and 2)."""
    one, two = cases["1"], cases["2"]
    piece = one[f"bytepair_piece_{LONG_PIECE[1]}_s"] / one[f"bytepair_piece_{LONG_PIECE[0]}_s"]
    checks = {
        "first_encode_vs_tiktoken": (one["bytepair_encode_first"] / one["tiktoken_encode_ordinary"], 2.0),
        "decode_vs_tiktoken": (one["bytepair_decode_bytes"] / one["tiktoken_decode_bytes"], 1.0),
        "batch_2_threads_vs_1": (two["bytepair_encode_batch_first"] / one["bytepair_encode_batch_first"], 1.4),
        "to_array_2_threads_vs_1": (
            two["bytepair_encode_to_array_first"] / one["bytepair_encode_to_array_first"], 1.4),
    }
    out = {name: {"ratio": round(r, 3), "goal": f">= {g}", "met": r >= g} for name, (r, g) in checks.items()}
    out["long_piece_10x_time"] = {"ratio": round(piece, 3), "goal": "<= 20", "met": piece <= 20}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.encode", description=__doc__.split("\n\n")[0])
    parser.add_argument("--patterns", nargs="+", default=["gpt2", "cl100k", "o200k"])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--held-out", default="5MB", help="held-out text size (5MB)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per case; the best counts")
    parser.add_argument("--text", default="english",
                        help="english (default) or a text of benches.corpus's non-English recipe "
                             "(multilingual, russian, chinese, ...): the model is trained on its "
                             "first 10 MB and encodes the text after it")
    parser.add_argument("--output", default=None,
                        help="results/encode.json, results/encode-TEXT.json for another --text")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "THREADS"), help=argparse.SUPPRESS)
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpus.apply_fetch_option(args)
    held_out = corpus.parse_size(args.held_out)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), held_out, args.rounds, args.text)))
        return 0
    output = args.output or str(RESULTS / ("encode.json" if args.text == "english"
                                           else f"encode-{args.text}.json"))
    report = {"commit": _commit(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform(),
                          "load_average_at_start": os.getloadavg()},
              "vocab_size": VOCAB, "train": TRAIN, "text": args.text,
              "units": "MB/s of UTF-8 input (seconds for *_s)",
              "patterns": {}}
    for pattern in args.patterns:
        model = train_model(pattern, args.text)
        cases = {}
        for threads in args.threads:
            done = subprocess.run(
                [sys.executable, "-m", "benches.encode", "--child", str(model), str(threads),
                 "--held-out", args.held_out, "--rounds", str(args.rounds), "--text", args.text],
                capture_output=True, text=True, check=False)
            if done.returncode:
                sys.stderr.write(done.stderr)
                return 1
            cases[str(threads)] = json.loads(done.stdout)
            print(f"{pattern} threads={threads}: " + ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in cases[str(threads)].items()), file=sys.stderr)
        entry = {"cases": cases, "load_average_after": os.getloadavg()}
        if {"1", "2"} <= set(cases):
            entry["goals"] = goals(cases)
            print(f"{pattern} goals: {json.dumps(entry['goals'])}", file=sys.stderr)
        report["patterns"][pattern] = entry
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(json.dumps(report, indent=1) + "\n")
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
