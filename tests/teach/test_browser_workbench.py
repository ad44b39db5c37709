"""The merge workbench in a real browser, against the library's reference trainer.

Headless Chromium loads the page from a real server; a corpus is typed, and
what the page draws (the pair table, its winner, every word after each merge,
the broken variants' marks) is compared with :mod:`bytepair.learn.naive` and
:mod:`bytepair.teach.variants`. The screenshot in ``docs/images/`` is taken here.
"""

from __future__ import annotations

from collections import Counter
import os
import tempfile
from pathlib import Path

import pytest
from helpers import shown, text_of

from bytepair.learn import naive
from bytepair.learn.rules import count_pairs, priority
from bytepair.teach import exercise
from bytepair.training import train_bytes, train_words

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
#: Where the screenshots go: docs/images/ only when asked
#: (``BYTEPAIR_SCREENSHOTS=docs/images``), so a test run leaves the committed ones alone.
IMAGES = Path(os.environ.get("BYTEPAIR_SCREENSHOTS")
              or Path(tempfile.gettempdir()) / "bytepair-screenshots")
#: Seconds to wait for the page: generous, for a loaded CI machine.
WAIT = 30

# A real browser takes a minute for these two files: they run in CI (-m "") and with -m slow;
# the default run checks the same answers through the server (test_workbench, test_viewer).
pytestmark = pytest.mark.slow


CHAPTER = "low lower lowest"


def join(left, right, rank):
    return left + right


@pytest.fixture
def page(teach_server, browser):
    server = teach_server()
    browser.get(server.url + "workbench")
    wait_for_words(browser, None)
    return browser


def wait_for_words(browser, merges):
    """Wait until the page shows the state after ``merges`` merges (None: any state)."""
    def ready(driver):
        text = text_of(driver, "#merge-count")
        return text and (merges is None or text == f"after {merges} merge" + ("" if merges == 1 else "s"))
    WebDriverWait(browser, WAIT).until(ready)


def start(browser, corpus, mode="words", end_of_word=True):
    browser.find_element(By.CSS_SELECTOR, f'input[name="mode"][value="{mode}"]').click()
    box = browser.find_element(By.ID, "eow")
    if box.is_enabled() and box.is_selected() != end_of_word:
        box.click()
    area = browser.find_element(By.ID, "corpus")
    area.clear()
    area.send_keys(corpus)
    browser.execute_script("document.getElementById('merge-count').textContent = ''")
    browser.find_element(By.ID, "start").click()
    wait_for_words(browser, 0)


def click_and_wait(browser, button, merges):
    browser.execute_script("document.getElementById('merge-count').textContent = ''")
    browser.find_element(By.ID, button).click()
    wait_for_words(browser, merges)


def words_shown(browser):
    """Every word's tokens as drawn: a list per row (data-id in byte mode)."""
    return browser.execute_script("""
        return [...document.querySelectorAll('#words .word')].map((w) =>
            [...w.querySelectorAll('.tokens .tok')].map((t) =>
                t.dataset.id !== undefined ? Number(t.dataset.id) : t.textContent));""")


def table_shown(browser):
    return browser.execute_script("""
        return [...document.querySelectorAll('#table tbody tr')].map((tr) => ({
            left: tr.cells[1].querySelector('.tok').textContent,
            right: tr.cells[2].querySelector('.tok').textContent,
            count: Number(tr.cells[3].textContent), winner: tr.classList.contains('winner'),
            tied: tr.classList.contains('tied')}));""")


def reference_table(rows, weights):
    counts = count_pairs(rows, weights)
    ordered = sorted(counts.items(), key=lambda item: priority(item[1], *item[0]))
    sizes = Counter(counts.values())
    return [{"left": l, "right": r, "count": c, "winner": i == 0, "tied": sizes[c] > 1}
            for i, ((l, r), c) in enumerate(ordered)]


def test_predict_table_and_merges_follow_the_reference(page):
    start(page, CHAPTER)
    rows = [[*w, "</w>"] for w in CHAPTER.split()]
    assert words_shown(page) == rows
    # The table stays hidden until the learner predicts.
    assert not page.find_element(By.ID, "table-wrap").is_displayed()
    page.find_element(By.ID, "guess-left").send_keys("o")
    page.find_element(By.ID, "guess-right").send_keys("w")
    page.find_element(By.ID, "check").click()
    WebDriverWait(page, WAIT).until(lambda d: shown(d, "#table-wrap"))
    verdict = page.find_element(By.ID, "verdict").text
    assert verdict.startswith("Close: o + w has the top count 3 too, but the tie goes to l + o")
    assert table_shown(page) == reference_table(rows, [1, 1, 1])
    # Apply merges one at a time; every word equals the reference trainer's after each.
    for k in range(1, 6):
        click_and_wait(page, "apply", k)
        _, expected = naive.fit(rows, [1, 1, 1], k, join)
        assert words_shown(page) == expected
        new = page.execute_script(
            "return [...document.querySelectorAll('#words .tok.new')].map((t) => t.textContent)")
        rules, _ = naive.fit(rows, [1, 1, 1], k, join)
        assert new and set(new) == {rules[-1].token_id}
        history = page.execute_script("""return [...document.querySelectorAll('#history tbody tr')]
            .map((tr) => [...tr.cells].map((c) => c.textContent))""")
        assert history == [[str(m.rank), f"{m.left} {m.right}", m.token_id, str(m.count),
                            str(m.replacements)] for m in rules]
    # Run N, then reset.
    page.find_element(By.ID, "n").clear()
    page.find_element(By.ID, "n").send_keys("20")
    model = train_words(Counter(CHAPTER.split()), 50, end_of_word="</w>")
    assert len(model.merges) < 5 + 20  # the words run out of pairs first
    click_and_wait(page, "run", len(model.merges))
    assert words_shown(page) == [list(model.words[w]) for w in CHAPTER.split()]
    assert page.find_element(By.ID, "apply").get_attribute("disabled")
    click_and_wait(page, "reset", 0)
    assert words_shown(page) == rows


def test_word_counts_and_bytes_follow_the_reference(page):
    start(page, "low 5\nlower 2\nnewest 6\nwidest 3", mode="counts", end_of_word=False)
    page.find_element(By.ID, "n").clear()
    page.find_element(By.ID, "n").send_keys("4")
    click_and_wait(page, "run", 4)
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    model = train_words(counts, 4)
    assert [(m.left, m.right) for m in model.merges] == [("e", "s"), ("es", "t"), ("l", "o"),
                                                         ("lo", "w")]
    assert words_shown(page) == [list(model.words[w]) for w in counts]
    docs = ["aaa", "aba", "héllo wörld, hello world"]
    start(page, "\n".join(docs), mode="bytes")
    for k in range(1, 4):
        click_and_wait(page, "apply", k)
        expected = train_bytes([d.encode() for d in docs], k, engine="naive").sequences
        assert words_shown(page) == [list(s) for s in expected]
    page.find_element(By.ID, "reveal").click()
    shown = table_shown(page)
    model = train_bytes([d.encode() for d in docs], 3, engine="naive")
    rows = model.sequences
    assert [r["count"] for r in shown] == [r["count"] for r in reference_table(rows, [1, 1, 1])][
        :len(shown)]


def variant_rows(browser):
    return browser.execute_script("""
        return [...document.querySelectorAll('#compare .word.brk')].map((w) => ({
            tokens: [...w.querySelectorAll('.tok')].map((t) => t.textContent),
            marks: [...w.querySelectorAll('.tok')].map((t) =>
                ['missed', 'reused', 'crossing'].find((m) => t.classList.contains(m)) || ''),
            differs: w.dataset.differs === 'true'}));""")


def choose_variant(browser, name):
    browser.execute_script("document.getElementById('compare').dataset.variant = ''")
    Select(browser.find_element(By.ID, "variant")).select_by_value(name)
    WebDriverWait(browser, WAIT).until(
        lambda d: d.execute_script("return document.getElementById('compare').dataset.variant")
        == name)


def test_each_broken_variant_marks_where_it_diverges(page):
    start(page, CHAPTER)
    click_and_wait(page, "apply", 1)
    choose_variant(page, "first-occurrence")
    rows = variant_rows(page)
    assert [r["tokens"][:2] for r in rows] == [["lo", "w"], ["l", "o"], ["l", "o"]]
    assert [r["marks"][:2] for r in rows] == [["", ""], ["missed", "missed"], ["missed", "missed"]]
    assert [r["differs"] for r in rows] == [False, True, True]
    summary = page.find_element(By.CSS_SELECTOR, "#compare .summary")
    assert summary.get_attribute("data-diverged") == "0"

    choose_variant(page, "deduplicated")
    wrong = page.execute_script("""return [...document.querySelectorAll('#compare table.pairs tr.differs')]
        .map((tr) => [...tr.cells].slice(0, 4).map((c) => c.textContent))""")
    assert wrong == []  # no pair repeats inside these words
    start(page, "aaa", end_of_word=False)
    click_and_wait(page, "apply", 1)
    choose_variant(page, "overlapping")
    rows = variant_rows(page)
    assert rows == [{"tokens": ["aa", "aa"], "marks": ["", "reused"], "differs": True}]
    assert words_shown(page) == [["aa", "a"]]

    click_and_wait(page, "reset", 0)
    choose_variant(page, "deduplicated")
    wrong = page.execute_script("""return [...document.querySelectorAll('#compare table.pairs tr.differs')]
        .map((tr) => [...tr.cells].slice(0, 4).map((c) => c.textContent))""")
    assert wrong == [["a", "a", "1", "2"]]

    start(page, "a a a", end_of_word=False)  # no pair inside a word: the reference is done
    choose_variant(page, "across-boundaries")
    table = page.execute_script("""return [...document.querySelectorAll('#compare table.pairs tbody tr')]
        .map((tr) => [...tr.cells].slice(0, 4).map((c) => c.textContent))""")
    assert table == [["a", "a", "2", "0"]]

    start(page, "ow lo")
    click_and_wait(page, "apply", 1)
    choose_variant(page, "arbitrary-ties")
    ranks = page.execute_script("""return [...document.querySelectorAll('#compare table.rules-compare tbody tr')]
        .map((tr) => [tr.classList.contains('differs'), tr.cells[1].textContent, tr.cells[4].textContent])""")
    assert ranks == [[True, "o w", "l + o · 1 · 1"]]
    reordered = page.find_element(By.CSS_SELECTOR, "#compare .reordered").text
    assert reordered.startswith("l + o (count 1)")


def test_across_boundaries_marks_tokens_that_cross(page):
    start(page, "xy xy xy xy ab ab", end_of_word=False)
    click_and_wait(page, "apply", 1)
    choose_variant(page, "across-boundaries")
    assert not any(r["differs"] for r in variant_rows(page))  # x + y: the same first rule
    page.execute_script("document.getElementById('compare').dataset.variant = ''")
    click_and_wait(page, "apply", 2)
    WebDriverWait(page, WAIT).until(
        lambda d: d.execute_script("return document.getElementById('compare').dataset.variant"))
    # The reference merges a + b; the broken variant joins xy + xy across two words.
    assert words_shown(page) == [["xy"]] * 4 + [["ab"]] * 2
    rows = variant_rows(page)
    assert rows[0] == {"tokens": ["xyxy"], "marks": ["crossing"], "differs": True}
    assert rows[1] == {"tokens": [], "marks": [], "differs": True}
    assert rows[4] == {"tokens": ["a", "b"], "marks": ["", ""], "differs": True}


def test_the_learners_functions_run_beside_the_reference(teach_server, browser, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(exercise.starter("mine.py"))
    server = teach_server(learner=exercise.load_learner(path))
    browser.get(server.url + "workbench")
    wait_for_words(browser, None)
    start(browser, "aaab ab")
    click_and_wait(browser, "apply", 1)
    browser.find_element(By.ID, "mine").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: text_of(d, "#learner .summary"))
    summary = browser.find_element(By.CSS_SELECTOR, "#learner .summary")
    # The starter counts a + a once in "aaab", so a + b (2) wins; the reference counts a + a
    # twice, ties it with a + b and takes the smaller pair, a + a.
    rules, _ = naive.fit([[*"aaab", "</w>"], [*"ab", "</w>"]], [1, 1], 1, join)
    assert (rules[0].left, rules[0].right) == ("a", "a")
    assert summary.get_attribute("data-diverged") == "0"
    assert "part from the reference at rank 0" in summary.text



def test_a_wrong_learner_is_shown_as_its_line_in_the_page(teach_server, browser, tmp_path):
    # A count_pairs that answers letters on a bytes corpus: its line, not the server's error.
    path = tmp_path / "mine.py"
    path.write_text(exercise.starter("mine.py").replace(
        "    counts = {}\n", "    return {('a', 'b'): 1}\n    counts = {}\n", 1))
    server = teach_server(learner=exercise.load_learner(path))
    browser.get(server.url + "workbench")
    wait_for_words(browser, None)
    start(browser, "ab ab", mode="bytes")
    click_and_wait(browser, "apply", 1)  # the learner's count_pairs runs from the first merge
    browser.find_element(By.ID, "mine").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: text_of(d, "#learner .error"))
    assert text_of(browser, "#learner .error") == (
        "mine.py: your count_pairs returned the key ('a', 'b'): on a bytes corpus a pair is two "
        "token IDs (ints)")

def test_bad_input_is_shown_in_the_page(page):
    start(page, CHAPTER)
    area = page.find_element(By.ID, "corpus")
    area.clear()
    page.find_element(By.ID, "start").click()
    WebDriverWait(page, WAIT).until(lambda d: text_of(d, "#error"))
    assert page.find_element(By.ID, "error").text.startswith("the corpus is empty")
    page.execute_script("document.getElementById('corpus').value = 'x'.repeat(40000)")
    page.find_element(By.ID, "start").click()
    WebDriverWait(page, WAIT).until(lambda d: "limit" in text_of(d, "#error"))
    page.execute_script("document.getElementById('corpus').value = 'ok\\nab\\ud800'")
    page.find_element(By.CSS_SELECTOR, 'input[name="mode"][value="bytes"]').click()
    page.find_element(By.ID, "start").click()
    WebDriverWait(page, WAIT).until(lambda d: "UTF-8" in text_of(d, "#error"))
    assert "line 2, character 3" in page.find_element(By.ID, "error").text
    status = page.execute_script("""
        const r = await fetch('/api/workbench/apply', {method: 'POST', body: '{"corpus": 3}',
                                                      headers: {'Content-Type': 'application/json'}});
        return [r.status, (await r.json()).error];""")
    assert status == [400, "corpus must be text (a JSON string)"]


def test_the_overlap_example_is_shown(page):
    text = page.find_element(By.ID, "overlap").text
    assert "counted 2 times" in text and "1 replacement" in text
    tokens = page.execute_script(
        "return [...document.querySelectorAll('#overlap .tok')].map((t) => t.textContent)")
    assert tokens == ["a", "a", "a", "a", "a", "aa", "a", "aa", "aa"]
    # Reused, the three input tokens make two merged tokens, which spell four a's.
    assert "3 input tokens become 2 merged tokens that spell 4 characters" in text


def test_screenshot(page):
    start(page, CHAPTER)
    click_and_wait(page, "apply", 1)
    page.find_element(By.ID, "guess-left").send_keys("lo")
    page.find_element(By.ID, "guess-right").send_keys("w")
    page.find_element(By.ID, "check").click()
    assert page.find_element(By.ID, "verdict").text == "Right: lo + w merges next (count 3)."
    choose_variant(page, "first-occurrence")
    IMAGES.mkdir(parents=True, exist_ok=True)
    # The whole page, as a learner scrolls through it.
    height = page.execute_script("return document.documentElement.scrollHeight")
    page.set_window_size(1280, min(height, 4000))
    try:
        page.execute_script("window.scrollTo(0, 0)")
        page.save_screenshot(str(IMAGES / "workbench.png"))
    finally:
        page.set_window_size(1280, 900)
    assert (IMAGES / "workbench.png").stat().st_size > 10_000
    timings = page.execute_script("return window.workbenchTimings")
    # The pair table is drawn when it is first shown (the prediction was checked).
    assert [t["action"] for t in timings][-3:] == ["parse", "apply", "table"]


def test_a_typed_space_predicts_a_byte_modes_space(page):
    start(page, "a b a b", mode="bytes")
    page.find_element(By.ID, "guess-left").send_keys(" ")
    page.find_element(By.ID, "guess-right").send_keys("b")
    page.find_element(By.ID, "check").click()
    WebDriverWait(page, WAIT).until(lambda d: text_of(d, "#verdict"))
    # (32, 98) and (97, 32) both count 2; the tie goes to the smaller left ID, the space.
    assert page.find_element(By.ID, "verdict").text.startswith("Right: \u2423 + b merges next (count 2).")


def test_byte_mode_shows_the_ids_that_order_its_ties(page):
    # After the first merge of aaa|aba, b + a (98, 97) comes before aa + a (256, 97): by ID.
    start(page, "aaa\naba", mode="bytes")
    click_and_wait(page, "apply", 1)
    page.find_element(By.ID, "reveal").click()
    rows = page.execute_script("""return [...document.querySelectorAll('#table tbody tr')].map((tr) =>
        [1, 2].map((c) => [tr.cells[c].querySelector('.tok').textContent,
                           Number(tr.cells[c].querySelector('.tid').textContent)]))""")
    rules, seqs = naive.fit([b"aaa", b"aba"], [1, 1], 1, lambda l, r, rank: 256 + rank)
    counts = count_pairs(seqs, [1, 1])
    ordered = [pair for pair, _ in sorted(counts.items(), key=lambda i: priority(i[1], *i[0]))]
    assert [[ids for _, ids in row] for row in rows] == [list(pair) for pair in ordered]
    assert rows[:3] == [[["a", 97], ["b", 98]], [["b", 98], ["a", 97]], [["aa", 256], ["a", 97]]]
    assert "by token ID" in text_of(page, "#table-wrap .note")
    start(page, "low lower")
    page.find_element(By.ID, "reveal").click()
    assert "(left, right) order" in text_of(page, "#table-wrap .note")
    assert page.execute_script("return document.querySelectorAll('#table .tid').length") == 0


def test_a_long_pair_table_shows_its_top_rows_then_all(page):
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = [letters[i:] + letters[:i] for i in range(0, 26, 3)] + [letters[::-1]]
    start(page, " ".join(words))
    page.find_element(By.ID, "reveal").click()
    rows = [[*w, "</w>"] for w in words]
    expected = reference_table(rows, [1] * len(rows))
    assert len(expected) > 50
    assert table_shown(page) == expected[:50]
    page.find_element(By.ID, "table-all").click()
    assert table_shown(page) == expected


#: What a reader cannot see: the page wider than the window, or a table column (its header)
#: cut off by the window or by a box that clips what overflows it.
LAYOUT_PROBLEMS = """
const problems = [];
const page = document.documentElement;
if (page.scrollWidth > page.clientWidth) {
  problems.push(`the page is ${page.scrollWidth} px wide in a ${page.clientWidth} px window`);
}
for (const th of document.querySelectorAll('table th')) {
  if (!th.closest('table').getClientRects().length) continue;  // a table not shown
  const cell = th.getBoundingClientRect();
  const name = `${th.closest('table').id || th.closest('table').className} column "${th.textContent}"`;
  if (cell.width < 1) { problems.push(`${name} has no width`); continue; }
  if (cell.left < -0.5 || cell.right > page.clientWidth + 0.5) problems.push(`${name} is outside the window`);
  for (let box = th.parentElement; box && box !== page; box = box.parentElement) {
    const style = getComputedStyle(box);
    if (style.overflowX === 'visible') continue;
    const r = box.getBoundingClientRect();
    const left = r.left + box.clientLeft, right = left + box.clientWidth;
    if (cell.left < left - 0.5 || cell.right > right + 0.5) {
      problems.push(`${name} is cut off by ${box.tagName.toLowerCase()}.${box.className}`);
    }
  }
}
return problems;
"""
LONG_WORDS = "internationalization internationalisation nationalities rationalisations"


@pytest.mark.parametrize("width", [420, 1400])
def test_the_page_fits_and_shows_every_column(teach_server, browser, tmp_path, width):
    path = tmp_path / "mine.py"
    path.write_text(exercise.starter("mine.py"))
    server = teach_server(learner=exercise.load_learner(path))
    size = browser.get_window_size()
    browser.set_window_size(width, 900)
    try:
        browser.get(server.url + "workbench")
        wait_for_words(browser, None)
        start(browser, LONG_WORDS)
        browser.find_element(By.ID, "n").clear()
        browser.find_element(By.ID, "n").send_keys("24")
        click_and_wait(browser, "run", 24)  # tokens up to 23 characters in "Rules learned"
        browser.find_element(By.ID, "reveal").click()
        choose_variant(browser, "first-occurrence")
        browser.find_element(By.ID, "mine").click()
        WebDriverWait(browser, WAIT).until(lambda d: text_of(d, "#learner .summary"))
        assert browser.execute_script(LAYOUT_PROBLEMS) == []
        tables = browser.execute_script(
            "return [...document.querySelectorAll('table')].filter((t) => t.getClientRects().length)"
            ".map((t) => t.id || t.className)")
        assert {"table", "history", "history rules-compare"} <= set(tables)
        IMAGES.mkdir(parents=True, exist_ok=True)
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(width, min(height, 6000))
        browser.save_screenshot(str(IMAGES / f"workbench-{width}.png"))
        assert browser.execute_script(LAYOUT_PROBLEMS) == []
    finally:
        browser.set_window_size(size["width"], size["height"])


def test_the_learners_column_is_headed_as_theirs(teach_server, browser, tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(exercise.starter("mine.py"))
    server = teach_server(learner=exercise.load_learner(path))
    browser.get(server.url + "workbench")
    wait_for_words(browser, None)
    start(browser, "aaab ab")
    click_and_wait(browser, "apply", 1)
    browser.find_element(By.ID, "mine").click()
    WebDriverWait(browser, WAIT).until(lambda d: text_of(d, "#learner .summary"))
    heads = browser.execute_script("""return [...document.querySelectorAll(
        '#learner .col-head, #learner table.rules-compare th')].map((h) => h.textContent)""")
    assert heads == ["Correct (reference)", "Yours: mine.py", "rank", "yours", "count", "replaced",
                     "reference"]
    assert not any("broken" in text_of(browser, sel).lower()
                   for sel in ("#learner .col-head", "#learner table.rules-compare thead"))


def test_the_predict_form_goes_when_training_ends(page):
    start(page, "ab", end_of_word=False)
    assert shown(page, "#predict")
    click_and_wait(page, "apply", 1)
    assert text_of(page, "#last").endswith("No adjacent pair is left: training ends here.")
    assert not shown(page, "#predict")
    click_and_wait(page, "reset", 0)
    assert shown(page, "#predict")


def test_the_introduction_follows_the_chapters_checkpoints(page):
    steps = page.execute_script(
        "return [...document.querySelectorAll('.intro .steps li strong')].map((s) => s.textContent)")
    assert steps == ["Predict.", "Run one merge.", "Attempt the exercise.", "Explain."]


def test_predict_first_waits_for_a_prediction_and_keeps_the_explanation(page):
    page.find_element(By.ID, "predict-first").click()
    start(page, CHAPTER)
    assert page.find_element(By.ID, "apply").get_attribute("disabled")
    assert page.find_element(By.ID, "run").get_attribute("disabled")
    assert not shown(page, "#reveal") and shown(page, "#predict-needed")
    page.find_element(By.ID, "guess-left").send_keys("o")
    page.find_element(By.ID, "guess-right").send_keys("w")
    page.find_element(By.ID, "check").click()
    WebDriverWait(page, WAIT).until(lambda d: shown(d, "#table-wrap"))
    assert not page.find_element(By.ID, "apply").get_attribute("disabled")
    assert not shown(page, "#explain")
    click_and_wait(page, "apply", 1)
    assert shown(page, "#explain")
    assert page.find_element(By.ID, "apply").get_attribute("disabled")  # the next one waits too
    page.find_element(By.ID, "explanation").send_keys("l + o won the tie with o + w.")
    notes = page.execute_script(
        "return [...document.querySelectorAll('#notes li')].map((li) => li.innerText)")
    assert notes == ["Merge 1 of low lower lowest: you predicted o + w; it was l + o (count 3).\n"
                     "l + o won the tie with o + w."]
    # Kept in the browser: a reload shows the same notes, and predict first still on.
    page.refresh()
    wait_for_words(page, None)
    WebDriverWait(page, WAIT).until(lambda d: text_of(d, "#notes"))
    assert text_of(page, "#notes").endswith("l + o won the tie with o + w.")
    assert page.find_element(By.ID, "predict-first").is_selected()
    page.find_element(By.ID, "notes-clear").click()
    page.find_element(By.ID, "predict-first").click()
    assert text_of(page, "#notes") == "" and shown(page, "#reveal")
