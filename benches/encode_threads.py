"""Encoding on 1 and 2 threads, side by side: ``Tokenizer.encode_batch``, ``encode_to_array``
and ``bytepair encode --per-line``.

The cases run in turn, 1 thread then 2, ``--turns`` times, each in a fresh
process, so both thread counts meet the same load on a shared machine. Each
records wall and CPU seconds; on a loaded machine two threads cannot show
their speed in wall time, so the CPU seconds per byte say whether a second
thread adds work (it should not), and the best wall over the turns is the
nearest to an idle machine::

    python -m benches.encode_threads                       # cl100k, 5 MB held out
    python -m benches.encode_threads --pattern o200k --turns 5 --cli-size 20MB

The text is the held-out English of ``benches.encode`` (the bytes that
follow the model's 10 MB of training text), one document per line; the model
is ``benches.encode``'s 32,768-token one. In-process cases: ``encode_batch``
of a freshly loaded tokenizer (``cold``: empty piece caches) and of one that
has encoded the text once (``warm``), and ``encode_to_array`` warm; beside them
``reference_sha256``, hashlib on the same threads, shows what a second thread
could give at that moment (its speedup is the ceiling under the load). Each
turn also runs two one-thread processes at once (``two_processes``): they
share nothing but the machine, so the CPU per byte they take over one thread
alone is what running on both cores costs any encoder (caches and memory of
the machine), and what two threads take beyond theirs is the threads' own
overhead. The CLI
case is the whole process (start, model load, read, encode, write) of
``bytepair encode MODEL --file F --per-line --dtype uint16 -o OUT``.

Results go to ``benches/results/encode-threads.json`` (``--output``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benches import corpus, encode

RESULTS = Path(__file__).parent / "results"
THREADS = (1, 2)


def _timed(run) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    out = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    del result  # freed after the clock stops
    return out


def child(model_path: str, text_path: str, threads: int, rounds: int) -> dict:
    """The in-process cases on ``threads`` threads (this process's only job)."""
    import bytepair

    lines = Path(text_path).read_text(encoding="utf-8").splitlines(keepends=True)
    out = {}
    for name in ("encode_batch_cold", "encode_batch_warm", "encode_to_array_warm"):
        rows = []
        for _ in range(rounds):
            tok = bytepair.load(model_path)
            if name.endswith("warm"):
                tok.encode_batch(lines, threads=threads)  # every thread's cache filled
            if name.startswith("encode_to_array"):
                rows.append(_timed(lambda: tok.encode_to_array(lines, threads=threads)))
            else:
                rows.append(_timed(lambda: tok.encode_batch(lines, threads=threads)))
        out[name] = min(rows, key=lambda row: row["wall_s"])
        out[name]["cpu_s_median"] = statistics.median(row["cpu_s"] for row in rows)
    data = "".join(lines).encode("utf-8") * 8
    rows = [_timed(lambda: _hash_on_threads(data, threads)) for _ in range(rounds)]
    out["reference_sha256"] = min(rows, key=lambda row: row["wall_s"])
    out["reference_sha256"]["cpu_s_median"] = statistics.median(row["cpu_s"] for row in rows)
    return out


def _hash_on_threads(data: bytes, threads: int) -> list[bytes]:
    """The machine's ceiling at this moment: SHA-256 of ``data`` (8 copies of the text) cut in
    ``threads`` parts hashed at once (hashlib runs without the GIL)."""
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    step, view = -(-len(data) // threads), memoryview(data)  # slices of a view: no copies
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda k: hashlib.sha256(view[k:k + step]).digest(),
                             range(0, len(data), step)))


def _children(model: str, text: str, threads: list[int], rounds: int) -> list[dict] | None:
    """The in-process cases in one child per entry of ``threads``, all running at once."""
    running = [subprocess.Popen([sys.executable, "-m", "benches.encode_threads", "--child", model,
                                 text, str(count), "--rounds", str(rounds)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for count in threads]
    outputs = [process.communicate() for process in running]
    if any(process.returncode for process in running):
        sys.stderr.write("".join(err for _, err in outputs))
        return None
    return [json.loads(out) for out, _ in outputs]


def _two_processes(turns: list[list[dict]], mb: float) -> dict:
    """Per case: the median CPU ns per byte of one-thread processes run two at once."""
    return {case: {"cpu_ns_per_byte": round(statistics.median(
        row[case]["cpu_s_median"] for pair in turns for row in pair) / mb * 1e3, 2)}
        for case in turns[0][0]}


def run_cli(model_path: str, text_path: str, threads: int) -> dict:
    """``bytepair encode --per-line`` as a whole process: wall and CPU seconds (its own)."""
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bytepair", "encode", model_path, "--file", text_path,
                        "--per-line", "--dtype", "uint16", "-o", os.path.join(tmp, "out.bin"),
                        "--threads", str(threads), "--quiet"], check=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        data = Path(tmp, "out.bin").read_bytes()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "output_bytes": len(data), "output_hash": hash(data)}


def _write_text(size: int, directory: str) -> str:
    path = os.path.join(directory, f"held-out-{size}.txt")
    Path(path).write_text(encode.held_out_text(size), encoding="utf-8")
    return path


def _summary(turns: list[dict], mb: float) -> dict:
    """Per case and thread count: best wall, CPU at the best wall and median, CPU ns per byte;
    then 2 threads against 1 (best wall and CPU)."""
    out = {}
    for case in turns[0]["1"]:
        entry = {}
        for threads in map(str, THREADS):
            rows = [turn[threads][case] for turn in turns]
            best = min(rows, key=lambda row: row["wall_s"])
            entry[threads] = {"best_wall_s": round(best["wall_s"], 4),
                              "cpu_s_at_best": round(best["cpu_s"], 4),
                              "median_wall_s": round(statistics.median(r["wall_s"] for r in rows), 4),
                              "median_cpu_s": round(statistics.median(r["cpu_s"] for r in rows), 4),
                              "cpu_ns_per_byte": round(
                                  statistics.median(r["cpu_s"] for r in rows) / mb * 1e3, 2)}
        one, two = entry["1"], entry["2"]
        entry["speedup_best_wall"] = round(one["best_wall_s"] / two["best_wall_s"], 3)
        entry["speedup_median_wall"] = round(one["median_wall_s"] / two["median_wall_s"], 3)
        entry["cpu_2_over_1"] = round(two["median_cpu_s"] / one["median_cpu_s"], 3)
        out[case] = entry
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benches.encode_threads",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--pattern", default="cl100k", help="gpt2, cl100k or o200k (cl100k)")
    parser.add_argument("--size", default="5MB", help="held-out text of the in-process cases (5MB)")
    parser.add_argument("--cli-size", default="5MB", help="held-out text of the CLI case (5MB)")
    parser.add_argument("--turns", type=int, default=5, help="turns of 1 then 2 threads (5)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per case in a process (3)")
    parser.add_argument("--output", default=str(RESULTS / "encode-threads.json"))
    parser.add_argument("--child", nargs=3, metavar=("MODEL", "TEXT", "THREADS"), help=argparse.SUPPRESS)
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    if args.child:
        model, text, threads = args.child
        print(json.dumps(child(model, text, int(threads), args.rounds)))
        return 0
    corpus.apply_fetch_option(args)
    model = str(encode.train_model(args.pattern))
    size, cli_size = corpus.parse_size(args.size), corpus.parse_size(args.cli_size)
    report = {"commit": encode._commit(),
              "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "machine": {"cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()},
              "pattern": args.pattern, "vocab_size": encode.VOCAB, "turns": args.turns,
              "rounds": args.rounds, "units": "seconds; CPU ns per input byte"}
    with tempfile.TemporaryDirectory() as tmp:
        text = _write_text(size, tmp)
        cli_text = text if cli_size == size else _write_text(cli_size, tmp)
        mb = os.path.getsize(text) / 1e6
        cli_mb = os.path.getsize(cli_text) / 1e6
        turns, cli_turns, loads, pairs = [], [], [], []
        for turn in range(args.turns):
            cases, cli = {}, {}
            for threads in THREADS:
                loads.append(os.getloadavg()[0])
                done = _children(model, text, [threads], args.rounds)
                if done is None:
                    return 1
                cases[str(threads)] = done[0]
                cli[str(threads)] = {"cli_per_line": run_cli(model, cli_text, threads)}
            pair = _children(model, text, [1, 1], args.rounds)
            if pair is None:
                return 1
            pairs.append(pair)
            if cli["1"]["cli_per_line"]["output_hash"] != cli["2"]["cli_per_line"]["output_hash"]:
                print("the CLI wrote different arrays on 1 and 2 threads", file=sys.stderr)
                return 1
            turns.append(cases)
            cli_turns.append(cli)
            print(f"turn {turn + 1}: " + json.dumps(cases), file=sys.stderr)
    report["load_average"] = {"min": min(loads), "max": max(loads), "median": statistics.median(loads)}
    report["bytes"] = {"in_process": round(mb * 1e6), "cli": round(cli_mb * 1e6)}
    report["cases"] = {**_summary(turns, mb), **_summary(cli_turns, cli_mb)}
    report["two_processes"] = _two_processes(pairs, mb)
    report["turns_raw"] = {"in_process": turns, "two_processes": pairs, "cli": [
        {t: {k: {x: v for x, v in row.items() if x != "output_hash"} for k, row in c.items()}
         for t, c in turn.items()} for turn in cli_turns]}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({**report["cases"], "two_processes": report["two_processes"]}, indent=1),
          file=sys.stderr)
    print(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
