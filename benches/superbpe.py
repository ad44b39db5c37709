"""SuperBPE against plain BPE at the same vocabulary, on the same data, side by side.

    python -m benches.superbpe --size 10MB                 # English, one document per line
    python -m benches.superbpe --size 10MB --fetch-corpora # may run apt-get to build the corpora
    python -m benches.superbpe --size 100MB --stages       # the goal case, and where the time goes
    python -m benches.superbpe --size 1GB --stages         # the large corpus: the 1 GB goal

The English corpus of ``--size`` (benches/corpus.py) is split into lines; a
seeded random 5% of the lines (``--seed``) is held out and never trained on.
Plain BPE (``bytepair.train``, GPT-2 pattern) and SuperBPE (the same, with
``superbpe=--transition``) each train on the other 95% to ``--vocab``, with
``--threads`` counting workers, in fresh processes, back to back (plain
first), ``--repeats`` times. Measured per run: wall time of the whole job
(reading, counting, both stages, the model in memory) and the peak resident
memory of the job's process tree (sampled every 20 ms from /proc), also per
input byte. Then both tokenizers encode three held-out texts and the bytes
per token are compared: the held-out English lines, English from another
source (the licence texts in /usr/share/common-licenses, which no corpus of
the English recipe holds) and the multilingual text of benches/corpus.py.

Above 100 MB the corpus is the large one of benches/corpus.py (``--language
large``: all of the English recipe, the multilingual text, more Debian
documentation, then the same text again). Nothing is held out there
(``--held-out-share 0``, the default for it): the corpus repeats its own
lines, so a held-out line would have been trained on all the same. Both
tokenizers train on the whole file, in place, and the token counts are
reported on the other English text (not in the corpus) and on the
multilingual text (which the corpus holds: marked as trained on).

The goals of the 100 MB case: SuperBPE's whole job at most 3x plain BPE's
time, peak RSS at most 8 bytes per input byte, and at least 15% fewer tokens
than plain BPE on the held-out English. Of the large corpus (1 GB): the
whole job within 3 minutes and 8 GiB on 2 cores. Results go to
``benches/results/superbpe-<--size>.json`` with the command, the commit and the
machine's load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from . import corpus as corpora

ROOT = Path(__file__).resolve().parent.parent
HELD_OUT_SHARE = 0.05
OTHER_ENGLISH = Path("/usr/share/common-licenses")
MULTILINGUAL_BYTES = 2_000_000
GOAL_TIME_RATIO = 3.0
GOAL_BYTES_PER_INPUT_BYTE = 8.0
GOAL_FEWER_TOKENS = 0.15
#: The large corpus's goals: the whole SuperBPE job, wall time and peak RSS.
GOAL_LARGE_SECONDS = 180.0
GOAL_LARGE_BYTES = 8 << 30
#: The English recipe holds about 117 MB: above this the corpus is the large one.
LARGEST_ENGLISH = 100_000_000


def split_lines(path: Path, seed: int, out: Path,
                share: float = HELD_OUT_SHARE) -> tuple[Path, Path | None]:
    """``(train, held_out)`` files: each line of ``path`` held out with probability ``share``,
    seeded; with ``share`` 0, ``path`` itself and None (no copy is made)."""
    if share == 0:
        return path, None
    name = f"{seed}" if share == HELD_OUT_SHARE else f"{seed}-{share}"
    train, held = out / f"train-{name}.txt", out / f"held-out-{name}.txt"
    if train.exists() and held.exists():
        return train, held
    rng = random.Random(seed)
    with open(path, "rb") as source, open(train, "wb") as kept, open(held, "wb") as apart:
        for line in source:
            (apart if rng.random() < share else kept).write(line)
    return train, held


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (Linux /proc)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def run_child(kind: str, train: Path, model: Path, args) -> dict:
    """One training in a fresh process: wall time and peak RSS of its process tree."""
    cmd = [sys.executable, "-m", "benches.superbpe", "--child", kind, str(train), str(model),
           "--vocab", str(args.vocab), "--transition", str(args.transition),
           "--threads", str(args.threads), "--max-words", str(args.max_words)]
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=ROOT)
    peak = 0
    while child.poll() is None:
        peak = max(peak, _tree_rss(child.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    if child.returncode:
        raise SystemExit(f"{kind} training failed with exit code {child.returncode}")
    return {"wall_s": round(wall, 3), "peak_rss_bytes": peak}


def stage_times(train: str, args) -> dict:
    """SuperBPE's stages one by one, then stage-1 learning beside the stage-2 count (as
    ``bytepair.training`` runs those two): seconds each."""
    import bytepair
    from bytepair import training
    from bytepair.learn.rules import byte_token
    from bytepair.model.spans import encode_spans
    from bytepair.training import SuperBPETrainer, TrainSpec
    from bytepair.training.spec import CountOptions, ReadOptions, SuperBPEOptions
    from bytepair.learn import segments
    from bytepair.learn import superbpe as superwords
    from bytepair.learn.incremental import IncrementalEngine
    from bytepair.model.models import ByteModel

    times, clock = {}, time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = round(now - clock, 3)
        clock = now

    files = bytepair.Files(train, per_line=True)
    counts = bytepair.count(files, workers=args.threads, progress=False)
    lap("stage 1: count")
    rules = training.learn(counts, args.transition - 256)
    del counts
    lap("stage 1: learn")
    pieces = bytepair.count(files, pretokenize="superbpe", workers=args.threads, progress=False)
    lap("stage 2: count")
    data, starts, weights = pieces.flat()
    model = ByteModel(rules)
    tokens, token_starts = encode_spans(model, data, starts, args.threads)
    times["stage 2: distinct pieces"] = len(starts) - 1
    times["stage 2: piece bytes"] = len(data)
    times["stage 2: tokens"] = len(tokens)
    del data, starts, pieces
    lap("stage 2: encode pieces")
    word_limit = (superwords.shapes([model.token_bytes(t) for t in range(model.vocab_size)]),
                  args.max_words)
    merges = args.vocab - 256 - len(rules)
    floor, cut = segments.cut_cold(tokens, token_starts, weights, merges, word_limit=word_limit,
                                   threads=args.threads)
    if cut is not None:
        tokens, token_starts, weights = cut
    del cut
    times["stage 2: floor"] = floor
    times["stage 2: tokens kept"] = len(tokens)
    lap("stage 2: cut cold windows")
    trainer = IncrementalEngine.from_arrays(tokens, token_starts, weights, byte_token,
                                             first_rank=len(rules), word_limit=word_limit)
    del tokens, token_starts, weights
    lap("stage 2: build engine")
    learned = trainer.steps(merges, floor)
    if len(learned) < merges:
        raise SystemExit("the stage-2 run on the stretches stopped short of the floor; "
                         "training would run again on the whole pieces")
    lap("stage 2: merges")
    del trainer
    # What training does instead of the two steps above taken in turn.
    counts = bytepair.count(files, workers=args.threads, progress=False)
    clock = time.perf_counter()
    trainer = SuperBPETrainer(TrainSpec(
        vocab_size=args.vocab, reading=ReadOptions(per_line=True), progress=False,
        counting=CountOptions(workers=args.threads),
        superbpe=SuperBPEOptions(args.transition, max_words=args.max_words)))
    trainer.learn_while_counting(lambda: training.learn(counts, args.transition - 256), files)
    lap("stage 1: learn beside stage 2: count")
    return times


def child(kind: str, train: str, model: str, args) -> None:
    import bytepair

    if kind == "stages":
        Path(model).write_text(json.dumps(stage_times(train, args)), encoding="utf-8")
        return
    options = dict(vocab_size=args.vocab, workers=args.threads, progress=False)
    if kind == "superbpe":
        options.update(superbpe=args.transition, max_words=args.max_words)
    bytepair.train(bytepair.Files(train, per_line=True), **options).save(model)


def texts() -> dict[str, list[str]]:
    other = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted(OTHER_ENGLISH.iterdir()) if p.is_file() and not p.is_symlink()]
    path = corpora.corpus_path(10_000_000, language="multilingual", clip=True)
    with open(path, "rb") as f:
        multilingual = f.read(MULTILINGUAL_BYTES).decode("utf-8", errors="ignore").splitlines()
    return {"other_english": other, "multilingual": multilingual}


def bytes_per_token(tokenizer, docs: list[str]) -> dict:
    total = sum(len(d.encode("utf-8")) for d in docs)
    tokens = sum(len(ids) for ids in tokenizer.encode_batch(docs, threads=1))
    return {"bytes": total, "tokens": tokens, "bytes_per_token": round(total / tokens, 4)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="10MB")
    parser.add_argument("--vocab", type=int, default=65536)
    parser.add_argument("--transition", type=int, default=49152)
    parser.add_argument("--max-words", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--language", choices=("english", "large"), default=None,
                        help="the corpus (default: english up to 100MB, large above)")
    parser.add_argument("--held-out-share", type=float, default=None,
                        help="the share of lines held out (default: 0.05 for english, 0 for large)")
    parser.add_argument("--child", nargs=3, metavar=("KIND", "TRAIN", "MODEL"), help=argparse.SUPPRESS)
    parser.add_argument("--stages", action="store_true",
                        help="also time SuperBPE's stages one by one, in one more fresh process")
    parser.add_argument("--no-write", action="store_true")
    corpora.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpora.apply_fetch_option(args)
    if args.child:
        child(*args.child, args)
        return

    import bytepair

    load_before = os.getloadavg()
    size = corpora.parse_size(args.size)
    language = args.language or ("english" if size <= LARGEST_ENGLISH else "large")
    share = args.held_out_share
    if share is None:
        share = HELD_OUT_SHARE if language == "english" else 0.0
    if not 0 <= share < 1:
        parser.error(f"--held-out-share must be in [0, 1), got {share}")
    path = corpora.corpus_path(size, language=language)
    work = corpora.cache_dir() / (f"superbpe-{size}" if language == "english"
                                  else f"superbpe-{language}-{size}")
    work.mkdir(exist_ok=True)
    train, held = split_lines(path, args.seed, work, share)
    train_bytes = train.stat().st_size
    runs = {"plain": [], "superbpe": []}
    for _ in range(args.repeats):
        for kind in runs:
            result = run_child(kind, train, work / f"{kind}.json", args)
            result["peak_rss_per_input_byte"] = round(result["peak_rss_bytes"] / train_bytes, 3)
            runs[kind].append(result)
            print(kind, result, flush=True)
    stages = None
    if args.stages:
        run_child("stages", train, work / "stages.json", args)
        stages = json.loads((work / "stages.json").read_text(encoding="utf-8"))
        print("stages", stages, flush=True)
    models = {kind: bytepair.load(work / f"{kind}.json") for kind in runs}
    held_texts = texts()
    if held is not None:
        held_texts = {"held_out_english": held.read_text(encoding="utf-8").splitlines(), **held_texts}
    tokens = {name: {kind: bytes_per_token(models[kind], docs) for kind in models}
              for name, docs in held_texts.items()}
    for name, by in tokens.items():
        by["fewer_tokens"] = round(1 - by["superbpe"]["tokens"] / by["plain"]["tokens"], 4)
    if language == "large":
        tokens["multilingual"]["trained_on"] = True  # the large corpus holds this text
    wall = {kind: statistics.median(r["wall_s"] for r in runs[kind]) for kind in runs}
    peak = max(r["peak_rss_per_input_byte"] for r in runs["superbpe"])
    peak_bytes = max(r["peak_rss_bytes"] for r in runs["superbpe"])
    summary = {
        "time_ratio": round(wall["superbpe"] / wall["plain"], 3),
        "superbpe_wall_s": wall["superbpe"],
        "superbpe_peak_rss_GiB": round(peak_bytes / (1 << 30), 3),
        "superbpe_peak_rss_per_input_byte": peak,
    }
    if held is not None:
        summary["held_out_fewer_tokens"] = tokens["held_out_english"]["fewer_tokens"]
    if language == "large":
        summary["goals"] = {
            f"whole job <= {GOAL_LARGE_SECONDS:.0f} s": wall["superbpe"] <= GOAL_LARGE_SECONDS,
            f"peak RSS <= {GOAL_LARGE_BYTES >> 30} GiB": peak_bytes <= GOAL_LARGE_BYTES,
        }
    else:
        summary["goals"] = {
            f"time ratio <= {GOAL_TIME_RATIO}": summary["time_ratio"] <= GOAL_TIME_RATIO,
            f"peak RSS <= {GOAL_BYTES_PER_INPUT_BYTE} bytes per input byte":
                peak <= GOAL_BYTES_PER_INPUT_BYTE,
        }
        if held is not None:
            summary["goals"][f">= {GOAL_FEWER_TOKENS:.0%} fewer tokens on held-out English"] = \
                summary["held_out_fewer_tokens"] >= GOAL_FEWER_TOKENS
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    result = {
        "command": "python -m benches.superbpe " + " ".join(argv if argv is not None else sys.argv[1:]),
        "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "corpus": {"path": path.name, "language": language, "train_bytes": train_bytes,
                   "held_out_bytes": held.stat().st_size if held is not None else 0,
                   "seed": args.seed, "held_out_share": share},
        "vocab_size": args.vocab, "transition": args.transition, "max_words": args.max_words,
        "threads": args.threads, "runs": runs, "stage_seconds": stages, "tokens": tokens,
        "summary": summary,
    }
    print(json.dumps(summary, indent=1))
    if not args.no_write:
        out = ROOT / "benches" / "results" / f"superbpe-{args.size}.json"
        out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(out)


if __name__ == "__main__":
    main()
