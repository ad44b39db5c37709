"""The merge workbench's speed, measured in the browser (Performance API).

A 2,000-word corpus (the first 2,000 words of the King James Genesis text
shipped with the package, as a word list with ``</w>``) is typed into the
workbench, served by ``bytepair.teach.server`` and driven by headless
Chromium. Each case times "Apply one merge" from the click to the words
and the history drawn and painted (the frame after the DOM update), the
server's reference trainer included. The pair table stays hidden until the
learner predicts; it is drawn when shown, and timed as a case of its own:

* ``first``: the first merge (Reset, then Apply). Goal: 100 ms.
* ``after_100``: the 101st merge, right after Run 100 merges (the server
  continues from the rows it reached, so this is one round too).
* ``table``: the pair table after the first merge, from the click on "show
  the table" to its rows painted (no request: the answer holds the table).
* ``variants``: on the server only (``handle`` and its JSON, no browser),
  each broken variant beside the reference at merge 100 on a corpus it has
  not seen (``cold``: every round from the characters), then at merge 101
  (``continued``: one round more).

::

    python -m benches.workbench                 # 10 repeats of each case
    python -m benches.workbench --repeats 3 --no-write

Results go to ``benches/results/workbench.json`` with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
from importlib import resources

from benches.encode import _commit
from benches.harness import save_result
from benches.viewer import browser, wait

WORDS = 2000
GOAL_MS = 100
DEEP = 100


def corpus_words(count: int = WORDS) -> str:
    text = resources.files("bytepair").joinpath("data", "kjv-genesis-1-11.txt").read_text("utf-8")
    return " ".join(text.split()[:count])


def measure(repeats: int) -> dict:
    from selenium.webdriver.common.by import By

    from bytepair.teach.server import TeachServer

    text = corpus_words()
    server = TeachServer()
    server.start()
    driver = browser()
    timings = "return window.workbenchTimings"
    merges = "return document.getElementById('merge-count').textContent"

    def click(button: str, expected: str) -> None:
        count = len(driver.execute_script(timings))
        driver.find_element(By.ID, button).click()
        wait(driver, f"return window.workbenchTimings.length > {count}")
        assert driver.execute_script(merges) == expected, driver.execute_script(merges)

    try:
        driver.get(server.url + "workbench")
        wait(driver, "return window.workbenchTimings.length")
        driver.execute_script("document.getElementById('corpus').value = arguments[0]", text)
        click("start", "after 0 merges")
        for _ in range(repeats):
            click("apply", "after 1 merge")
            click("reveal", "after 1 merge")
            click("reset", "after 0 merges")
        first = [t for t in driver.execute_script(timings) if t["action"] == "apply"][-repeats:]
        table = [t for t in driver.execute_script(timings) if t["action"] == "table"][-repeats:]
        box = driver.find_element(By.ID, "n")
        box.clear()
        box.send_keys(str(DEEP))
        click("run", f"after {DEEP} merges")
        for _ in range(repeats):
            click("apply", f"after {DEEP + 1} merges")
            driver.execute_script("window.workbenchTimings.push({action: 'bench'})")
            click("reset", "after 0 merges")
            click("run", f"after {DEEP} merges")
        deep = [t for t in driver.execute_script(timings) if t["action"] == "apply"][-repeats:]
        rows = driver.execute_script("return document.querySelectorAll('#words .word').length")
    finally:
        driver.quit()
        server.stop()
    return {
        "corpus": {"words": WORDS, "bytes": len(text.encode()), "rows_drawn": rows,
                   "source": "bytepair/data/kjv-genesis-1-11.txt, first 2,000 words, with </w>"},
        "first_ms": [round(t["total"], 1) for t in first],
        "first_server_ms": [round(t["answered"], 1) for t in first],
        "after_100_ms": [round(t["total"], 1) for t in deep],
        "after_100_server_ms": [round(t["answered"], 1) for t in deep],
        "table_ms": [round(t["total"], 1) for t in table],
    }


def variants_on_the_server() -> dict:
    import json
    import time

    from bytepair.teach import workbench

    payload = {"corpus": corpus_words(), "mode": "words"}
    workbench.handle("run", dict(payload, merges=0, n=DEEP))
    out = {}
    for name in workbench.variants.VARIANTS:
        times = []
        for merges in (DEEP, DEEP + 1):
            start = time.perf_counter()
            answer = workbench.handle("variant", dict(payload, merges=merges, variant=name))
            json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
            times.append(round((time.perf_counter() - start) * 1000, 1))
        out[name] = {"cold_ms": times[0], "continued_ms": times[1]}
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    result = {"suite": "workbench", "commit": _commit(), "machine": platform.node() and {
        "cpus": os.cpu_count(), "load_before": os.getloadavg()}}
    result.update(measure(args.repeats))
    result["variants"] = variants_on_the_server()
    result["machine"]["load_after"] = os.getloadavg()
    for case, goal in (("first", GOAL_MS), ("after_100", None), ("table", None)):
        times = result[f"{case}_ms"]
        summary = {"median_ms": statistics.median(times), "max_ms": max(times)}
        if goal is not None:
            summary.update(goal_ms=goal, met=statistics.median(times) <= goal)
        result[case + "_summary"] = summary
    save_result(result, "workbench", write=not args.no_write)


if __name__ == "__main__":
    main()
