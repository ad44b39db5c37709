"""The viewer server's memory for one encode request at the page's limits: 1,000,000 characters,
4 models.

A real ``bytepair workbench`` process serves four small byte-level models (100 merges each,
learned on English), and the text is 1,000,000 characters of three-byte CJK with a space now
and then: every byte of it is a token of its own, the most tokens the page's limits allow
(about 3 million a model). One ``encode`` request is sent as
the page sends it (its first window); the figures are the server's resident memory before and
after (``VmRSS``), its peak (``VmHWM``), the answer's size and the time to answer.

    python -m benches.viewer_memory                       # this checkout's src/
    python -m benches.viewer_memory --src /other/src      # another checkout, for a before/after

Writes benches/results/viewer-memory.json (``--no-write`` to skip); prints the figures.
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benches" / "results" / "viewer-memory.json"
CHARACTERS = 1_000_000
MODELS = 4


ENGLISH = "the pair that occurs most often is merged into a new token, and counted again. " * 50


def _text(seed: int = 0) -> str:
    rng = random.Random(seed)
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)] + [" "]
    return "".join(rng.choice(cjk) for _ in range(CHARACTERS))


def _status(pid: int) -> dict[str, int]:
    fields = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def measure(src: Path, folder: Path) -> dict:
    import bytepair

    text = _text()
    models = []
    for k in range(MODELS):
        path = folder / f"m{k}.json"
        if not path.exists():
            bytepair.Tokenizer(bytepair.train_bytes([ENGLISH], 100 + k)).save(path)
        models.append(str(path))
    env = dict(os.environ, PYTHONPATH=str(src))
    process = subprocess.Popen([sys.executable, "-m", "bytepair", "workbench", "--no-browser",
                                *models], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    try:
        line = process.stdout.readline()
        port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
        time.sleep(0.5)
        before = _status(process.pid)
        body = json.dumps({"text": text, "models": [Path(m).name for m in models],
                           "start": 0, "limit": 500}).encode()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        started = time.perf_counter()
        connection.request("POST", "/api/viewer/encode", body,
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        seconds = time.perf_counter() - started
        connection.close()
        after = _status(process.pid)
        tokens = [r.get("tokens", len(r.get("ids", []))) for r in json.loads(answer)["results"]]
        return {"src": str(src), "status": response.status, "text_characters": len(text),
                "text_bytes": len(text.encode()), "models": MODELS, "tokens": tokens,
                "answer_bytes": len(answer), "seconds": round(seconds, 2),
                "rss_before": before["VmRSS"], "rss_after": after["VmRSS"],
                "rss_growth": after["VmRSS"] - before["VmRSS"],
                "peak_growth": after["VmHWM"] - before["VmRSS"]}
    finally:
        process.terminate()
        process.communicate(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src",
                        help="the bytepair source tree the server runs (default: this one)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.src.resolve(), Path(folder))
    result.update(date=datetime.date.today().isoformat(), python=platform.python_version(),
                  load=os.getloadavg()[0])
    mib = 1 << 20
    print(f"{result['src']}: {result['text_bytes'] / mib:.1f} MiB of text, tokens "
          f"{result['tokens']}: RSS +{result['rss_growth'] / mib:,.0f} MiB (peak "
          f"+{result['peak_growth'] / mib:,.0f} MiB), answer {result['answer_bytes'] / mib:.2f} "
          f"MiB in {result['seconds']} s (load {result['load']:.1f})")
    if not args.no_write:
        runs = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
        runs.append(result)
        RESULTS.write_text(json.dumps(runs, indent=1) + "\n")


if __name__ == "__main__":
    main()
