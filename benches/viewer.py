"""The tokenizer viewer's speed, measured in the browser (Performance API).

A 131,072-token model (cl100k pattern) is trained once on the first 30 MB of
the English corpus (``python -m benches.corpus``; 10 MB runs out of pairs
before 131,072) and cached. The viewer is
served by ``bytepair.teach.server`` and driven by headless Chromium:

* ``tokens``: 100 KB of held-out text (the lines after the training text) in
  the text box, then single keystrokes typed at its end: the time from each
  keystroke's ``input`` event to the tokens and IDs drawn and painted (the
  frame after the DOM update), the server's encoding included. Goal: 300 ms.
* ``tree``: the merge tree of the highest-rank token, from the request to the
  tree drawn and painted. Goal: 100 ms.

::

    python -m benches.viewer                 # both cases, 10 repeats each
    python -m benches.viewer --repeats 3 --no-write
    python -m benches.viewer --fetch-corpora       # build the English corpus if not cached

Results go to ``benches/results/viewer.json`` with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from benches import corpus
from benches.encode import _commit
from benches.harness import save_result

VOCAB = 131072
TRAIN = "30MB"
PATTERN = "cl100k"
TEXT_BYTES = 100_000
GOALS_MS = {"tokens": 300, "tree": 100}


def model_path() -> Path:
    """The 131,072-token model, trained on the first 10 MB once and cached."""
    import bytepair

    path = corpus.cache_dir() / "models" / f"viewer-{PATTERN}-{VOCAB}-{TRAIN}.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        text = corpus.corpus_path(TRAIN, corpus.corpus_path("100MB"))
        tok = bytepair.train(text, vocab_size=VOCAB, pretokenize=PATTERN,
                             per_line=True, progress=False)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tok.save(tmp)
        os.replace(tmp, path)
        print(f"trained {path.name} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return path


def held_out_text(size: int = TEXT_BYTES) -> str:
    """``size`` bytes or fewer (whole lines) of the English text after the training text."""
    source = corpus.corpus_path("100MB")
    with open(source, "rb") as f:
        f.seek(corpus.parse_size(TRAIN))
        data = f.read(size + 10_000)
    data = data[data.index(b"\n") + 1:]
    return data[:data.rindex(b"\n", 0, size) + 1].decode("utf-8")


def browser():
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options,
                            service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"))


def wait(driver, script: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.005)
    raise SystemExit(f"timed out waiting for: {script}")


def measure(repeats: int) -> dict:
    from selenium.webdriver.common.by import By

    import bytepair
    from bytepair.teach.server import TeachServer
    from bytepair.teach.viewer import Viewer

    path = model_path()
    started = time.perf_counter()
    tok = bytepair.load(path)
    load_s = time.perf_counter() - started
    text = held_out_text()
    server = TeachServer(Viewer({path.name: tok}))
    server.start()
    driver = browser()
    try:
        driver.get(server.url + "viewer")
        wait(driver, "return document.body.dataset.ready")
        drawn = "return window.viewerTimings.tokens.length"
        wait(driver, "return document.querySelectorAll('.panel .ids > span').length")
        before = driver.execute_script(drawn)
        driver.execute_script("const t = document.getElementById('text'); t.value = arguments[0];"
                              "t.dispatchEvent(new Event('input'));", text[:-1])
        wait(driver, f"return window.viewerTimings.tokens.length > {before}")
        box = driver.find_element(By.ID, "text")
        for i in range(repeats):  # one keystroke at a time, each drawn before the next
            count = driver.execute_script(drawn)
            box.send_keys("x" if i % 2 else "\b")
            wait(driver, f"return window.viewerTimings.tokens.length > {count}")
        tokens = driver.execute_script("return window.viewerTimings.tokens")[-repeats:]
        drawn_ids = driver.execute_script("return document.querySelectorAll('.panel .ids > span').length")
        counted = driver.execute_script("return document.querySelector('.panel .count').textContent")
        top = tok.vocab_size - 1 - len(tok.special_tokens)
        for _ in range(repeats):
            count = driver.execute_script("return window.viewerTimings.tree.length")
            driver.execute_script("showTree(arguments[0], arguments[1])", path.name, top)
            wait(driver, f"return window.viewerTimings.tree.length > {count}")
        trees = driver.execute_script("return window.viewerTimings.tree")[-repeats:]
        nodes = driver.execute_script("return document.querySelectorAll('#tree-body .node').length")
    finally:
        driver.quit()
        server.stop()
    return {
        "model": {"vocab_size": tok.vocab_size, "pattern": PATTERN, "trained_on": TRAIN,
                  "load_s": round(load_s, 3)},
        "text": {"bytes": len(text.encode()), "characters": len(text),
                 "tokens": int(counted.replace(",", "")), "tokens_drawn_at_first": drawn_ids},
        "tokens_ms": [round(t["total"], 1) for t in tokens],
        "tokens_server_ms": [round(t["answered"], 1) for t in tokens],
        "tree_ms": [round(t["total"], 1) for t in trees],
        "tree": {"token": top, "nodes": nodes, "bytes": len(tok.token_bytes(top))},
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no-write", action="store_true")
    corpus.add_fetch_option(parser)
    args = parser.parse_args(argv)
    corpus.apply_fetch_option(args)
    result = {"suite": "viewer", "commit": _commit(),
              "command": "python -m benches.viewer --repeats %d" % args.repeats,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "load_before": os.getloadavg()}}
    result.update(measure(args.repeats))
    result["machine"]["load_after"] = os.getloadavg()
    for case in ("tokens", "tree"):
        times = result[f"{case}_ms"]
        result[case + "_summary"] = {"median_ms": statistics.median(times), "max_ms": max(times),
                                     "goal_ms": GOALS_MS[case],
                                     "met": statistics.median(times) <= GOALS_MS[case]}
    save_result(result, "viewer", write=not args.no_write)


if __name__ == "__main__":
    main()
