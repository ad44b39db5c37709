"""SuperBPE's stage-1 learning and stage-2 count: in turn against side by side, paired.

    python -m benches.superbpe_overlap --size 100MB --repeats 3

On the training share of ``benches.superbpe``'s split of the English corpus
of ``--size``, in one process, alternating ``--repeats`` times: stage-1
learning to ``--transition`` (``learn(counts, ...)``) then the stage-2 count
(``count(files, pretokenize="superbpe", workers=--threads)``), in turn;
against ``SuperBPETrainer.learn_while_counting`` with the same two, as training
runs them (the count on a thread with ``--threads - 1`` workers). Stage-1
counts are made before each timed step and not timed. The two sides of a
pair run back to back, so that the shared machine's load is about the same
for both. Results go to ``benches/results/superbpe-overlap-<--size>.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

from . import corpus as corpora
from .harness import save_result
from .superbpe import ROOT, split_lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="10MB")
    parser.add_argument("--transition", type=int, default=49152)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)

    import bytepair
    from bytepair import training
    from bytepair.training import SuperBPETrainer, TrainSpec
    from bytepair.training.spec import CountOptions, ReadOptions, SuperBPEOptions

    size = corpora.parse_size(args.size)
    work = corpora.cache_dir() / f"superbpe-{size}"
    work.mkdir(exist_ok=True)
    train, _ = split_lines(corpora.corpus_path(size), args.seed, work)
    files = bytepair.Files(train, per_line=True)
    merges = args.transition - 256
    trainer = SuperBPETrainer(TrainSpec(
        merges=merges + 1, reading=ReadOptions(per_line=True), progress=False,
        counting=CountOptions(workers=args.threads), superbpe=SuperBPEOptions(args.transition)))
    load_before = os.getloadavg()
    pairs = []
    for _ in range(args.repeats):
        counts = bytepair.count(files, workers=args.threads, progress=False)
        clock = time.perf_counter()
        training.learn(counts, merges)
        pieces = bytepair.count(files, pretokenize="superbpe", workers=args.threads,
                                progress=False)
        in_turn = time.perf_counter() - clock
        del counts, pieces
        counts = bytepair.count(files, workers=args.threads, progress=False)
        clock = time.perf_counter()
        _, pieces = trainer.learn_while_counting(lambda: training.learn(counts, merges), files)
        beside = time.perf_counter() - clock
        del counts, pieces
        pairs.append({"in_turn_s": round(in_turn, 3), "beside_s": round(beside, 3)})
        print(pairs[-1], flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    result = {
        "command": f"python -m benches.superbpe_overlap --size {args.size} --repeats {args.repeats}",
        "commit": commit, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "corpus": {"path": train.name, "train_bytes": train.stat().st_size},
        "transition": args.transition, "threads": args.threads, "pairs": pairs,
    }
    save_result(result, f"superbpe-overlap-{args.size}", not args.no_write)


if __name__ == "__main__":
    main()
