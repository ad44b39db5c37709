"""The tokenizer viewer in a real browser, against the library's own answers.

Headless Chromium loads the page from a real server, text is typed, and what
the page shows is compared with ``Tokenizer.encode`` and the models' rules.
The screenshots in ``docs/images/`` are taken here.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from helpers import shown, text_of

import bytepair
from bytepair.split import fastsplit
from bytepair.teach.viewer import curves_of_evaluation, differing_spans

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
#: Where the screenshots go: docs/images/ only when asked
#: (``BYTEPAIR_SCREENSHOTS=docs/images``), so a test run leaves the committed ones alone.
IMAGES = Path(os.environ.get("BYTEPAIR_SCREENSHOTS")
              or Path(tempfile.gettempdir()) / "bytepair-screenshots")
DATA = ROOT / "tests" / "data"
GENESIS = ROOT / "src" / "bytepair" / "data" / "kjv-genesis-1-11.txt"
#: Typed with the keyboard (ChromeDriver types characters of the Basic Multilingual Plane only).
TYPED = ("In the beginning God created the heaven and the earth.\n"
         "Смотритель маяка: «Огонь зажжён». Grüße aus Köln, naïve café!\n"
         "灯塔看守人每天晚上都写同一句话。 العربية ")
#: Added by script: a tab, an emoji outside the BMP, a control character, a special token.
SCRIPTED = "\tspaces  here 🙂\u0007<|endoftext|>"
#: Seconds to wait for the page: generous, for a loaded CI machine.
WAIT = 30

# A real browser takes a minute for these two files: they run in CI (-m "") and with -m slow;
# the default run checks the same answers through the server (test_workbench, test_viewer).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def models():
    corpus = bytepair.Files(str(GENESIS), str(DATA / "multilingual-sample.txt"), per_line=True)
    big = bytepair.train(corpus, merges=1500, pretokenize="gpt2", special_tokens=["<|endoftext|>"],
                         progress=False)
    small = bytepair.train(corpus, merges=300, pretokenize="gpt2", special_tokens=["<|endoftext|>"],
                           progress=False)
    return {"genesis-1500.json": big, "genesis-300.json": small}


@pytest.fixture(scope="module")
def curves(models, tmp_path_factory):
    folder = tmp_path_factory.mktemp("samples")
    lines = (DATA / "multilingual-sample.txt").read_text().splitlines()
    (folder / "en.txt").write_text("\n".join(lines[:5]))
    (folder / "ru.txt").write_text("\n".join(lines[6:10]))
    table = bytepair.evaluate(models, {"en": bytepair.Files(str(folder / "en.txt")), "ru": bytepair.Files(str(folder / "ru.txt"))},
                              step=256)
    return curves_of_evaluation(json.loads(table.to_json()))


@pytest.fixture
def page(teach_server, browser, models, curves):
    server = teach_server(models, curves)
    browser.get(server.url + "viewer")
    WebDriverWait(browser, WAIT).until(lambda d: d.execute_script("return document.body.dataset.ready"))
    return browser


def set_text(driver, text: str | None = None, typed: str | None = None) -> None:
    box = driver.find_element(By.ID, "text")
    box.clear()
    if typed is not None:
        box.send_keys(typed)
    if text is not None:
        driver.execute_script("const t = document.getElementById('text'); t.value += arguments[0];"
                              "t.dispatchEvent(new Event('input'));", text)


def shown_ids(driver, panel: int = 0) -> list[int]:
    return driver.execute_script(
        "const p = document.querySelectorAll('.panel')[arguments[0]];"
        "return p ? [...p.querySelectorAll('.ids > span')].map(s => +s.textContent) : [];", panel)


def wait_for_ids(driver, expected: list[int], panel: int = 0) -> None:
    WebDriverWait(driver, WAIT).until(lambda d: shown_ids(d, panel) == expected,
                                    message=f"the page never showed {expected[:10]}...")


def test_the_page_shows_the_library_ids(page, models):
    tok = models["genesis-1500.json"]
    set_text(page, SCRIPTED, typed=TYPED)
    text = TYPED + SCRIPTED
    assert page.execute_script("return document.getElementById('text').value") == text
    expected = tok.encode(text, allowed_special="all")
    wait_for_ids(page, expected)
    panel = page.find_element(By.CSS_SELECTOR, ".panel")
    assert panel.find_element(By.CSS_SELECTOR, ".count").text == f"{len(expected):,}"
    assert panel.find_element(By.CSS_SELECTOR, ".bpt").text == f"{len(text.encode()) / len(expected):.2f}"
    assert panel.find_element(By.CSS_SELECTOR, ".cpt").text == f"{len(text) / len(expected):.2f}"
    tokens = panel.find_elements(By.CSS_SELECTOR, ".tokens > span")
    assert len(tokens) == len(expected)
    faces = page.execute_script(
        "return [...document.querySelectorAll('.panel .tokens > span')].map(s => s.innerHTML)")
    for token, face in zip(expected, faces):
        data = tok.token_bytes(token)
        if token in tok.special_tokens.values():
            assert 'class="special"' in face
            continue
        try:
            text_of = data.decode()
        except UnicodeDecodeError:  # not whole UTF-8: hex
            assert face == f'<b class="hex">{" ".join(f"{b:02X}" for b in data)}</b>'
            continue
        if " " in text_of:
            assert '<i class="ws">·</i>' in face
        if "\n" in text_of:
            assert "↵" in face
        if "\t" in text_of:
            assert "→" in face
        if "\u0007" in text_of:
            assert "\u2407" in face  # the control picture of BEL
    assert any("hex" in face for face in faces), "the emoji and CJK should leave partial tokens"


def test_hover_links_a_token_and_its_id(page, models):
    set_text(page, typed="In the beginning God created")
    wait_for_ids(page, models["genesis-1500.json"].encode("In the beginning God created"))
    tokens = page.find_elements(By.CSS_SELECTOR, ".panel .tokens > span")
    ids = page.find_elements(By.CSS_SELECTOR, ".panel .ids > span")
    ActionChains(page).move_to_element(tokens[2]).perform()
    assert "hl" in ids[2].get_attribute("class") and "hl" in tokens[2].get_attribute("class")
    ActionChains(page).move_to_element(ids[1]).perform()
    assert "hl" in tokens[1].get_attribute("class") and "hl" not in tokens[2].get_attribute("class")


def tree_nodes(driver) -> list[dict]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#tree-body .node')].map(n => ({...n.dataset}))")


def test_merge_tree_is_the_rules(page, models):
    tok = models["genesis-1500.json"]
    text = "In the beginning God created the heaven and the earth. Смотритель"
    set_text(page, typed=text)
    ids = tok.encode(text)
    wait_for_ids(page, ids)
    top = max(range(len(ids)), key=ids.__getitem__)  # the highest-rank token in the text
    page.find_elements(By.CSS_SELECTOR, ".panel .tokens > span")[top].click()
    WebDriverWait(page, WAIT).until(lambda d: tree_nodes(d) and tree_nodes(d)[0]["id"] == str(ids[top]))
    nodes = tree_nodes(page)
    # Depth first, left before right: the same walk over the rules.
    expected = []

    def walk(token):
        if token < 256:
            expected.append((token, "", "", ""))
            return
        rule = tok.merges[token - 256]
        expected.append((token, str(rule.rank), str(rule.count), str(rule.replacements)))
        walk(rule.left)
        walk(rule.right)

    walk(ids[top])
    assert [(int(n["id"]), n["rank"], n["count"], n["replacements"]) for n in nodes] == expected
    assert len(nodes) == 2 * len(tok.token_bytes(ids[top])) - 1
    shown = page.find_element(By.ID, "tree-body").text
    rule = tok.merges[ids[top] - 256]
    assert f"rank {rule.rank:,}" in shown and f"count {rule.count:,}" in shown
    shoot(page, IMAGES / "viewer-tree.png", page.find_element(By.ID, "tree"))


def test_compare_two_models(page, models):
    text = TYPED
    page.find_elements(By.CSS_SELECTOR, "#models input")[1].click()
    set_text(page, typed=text)
    big, small = models["genesis-1500.json"], models["genesis-300.json"]
    wait_for_ids(page, big.encode(text), 0)
    wait_for_ids(page, small.encode(text), 1)
    lengths = [[len(t.token_bytes(i)) for i in t.encode(text)] for t in (big, small)]
    expected = differing_spans(lengths)
    marked = page.execute_script(
        "return [...document.querySelectorAll('.panel')].map(p => [...p.querySelectorAll("
        "'.tokens > span')].map(s => s.classList.contains('d') ? 1 : 0))")
    assert marked == expected and 0 < sum(expected[0]) < len(expected[0])
    counts = page.find_elements(By.CSS_SELECTOR, ".panel .ndiff")
    assert [c.text for c in counts] == [str(sum(row)) for row in expected]
    # The tree of the first model's longest token, for the screenshot.
    ids = big.encode(text)
    longest = max(ids, key=lambda i: len(big.token_bytes(i)))
    page.find_elements(By.CSS_SELECTOR, ".panel .tokens > span")[ids.index(longest)].click()
    WebDriverWait(page, WAIT).until(lambda d: tree_nodes(d) and tree_nodes(d)[0]["id"] == str(longest))
    shoot(page, IMAGES / "viewer.png")


def shoot(driver, path: Path, element=None, height: int = 1400) -> None:
    """A screenshot in a window tall enough for the whole panel, then the window as it was."""
    size = driver.get_window_size()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        driver.set_window_size(size["width"], height)
        driver.execute_script("window.scrollTo(0, 0)")
        assert (element.screenshot(str(path)) if element is not None
                else driver.save_screenshot(str(path)))
    finally:
        driver.set_window_size(size["width"], size["height"])


def test_curves_are_the_evaluation(page, curves):
    drawn = page.execute_script(
        "return [...document.querySelectorAll('#curves polyline')].map(l => [l.dataset.model, "
        "l.dataset.sample, l.getAttribute('stroke'), l.getAttribute('stroke-dasharray'), "
        "l.getAttribute('points').split(' ').length])")
    models = list(dict.fromkeys(c["model"] for c in curves))
    assert [(m, s, n) for m, s, _, _, n in drawn] == [
        (c["model"], c["sample"], len(c["sizes"]))
        for c in sorted(curves, key=lambda c: models.index(c["model"]))]
    # One colour per model, one line style per sample.
    colour = {(m, s): c for m, s, c, _, _ in drawn}
    dash = {(m, s): d for m, s, _, d, _ in drawn}
    assert colour[("genesis-1500.json", "en")] == colour[("genesis-1500.json", "ru")]
    assert colour[("genesis-1500.json", "en")] != colour[("genesis-300.json", "en")]
    assert dash[("genesis-1500.json", "en")] == dash[("genesis-300.json", "en")]
    assert dash[("genesis-1500.json", "en")] != dash[("genesis-1500.json", "ru")]
    # The legend sits beside the data, not over it; the ticks are sizes evaluated.
    plot = page.find_element(By.CSS_SELECTOR, "#curves svg.plot").rect
    legend = page.find_element(By.CSS_SELECTOR, "#curves .legend").rect
    assert legend["x"] >= plot["x"] + plot["width"] or legend["y"] >= plot["y"] + plot["height"]
    ticks = page.execute_script(
        "return [...document.querySelectorAll('#curves .xtick')].map(t => t.textContent)")
    sizes = {f"{s:,}" for c in curves for s in c["sizes"]}
    assert ticks and set(ticks) <= sizes
    shoot(page, IMAGES / "viewer-curves.png", page.find_element(By.ID, "curves"))


def test_a_curve_on_another_stays_visible(teach_server, browser):
    # A 2,048-token model is its 8,192 model's first rules: equal up to 2,048, the same line.
    big = {"model": "8192", "sample": "en", "sizes": [256, 1024, 2048, 8192],
           "bytes_per_token": [1.0, 3.0, 3.0, 4.0]}
    small = {"model": "2048", "sample": "en", "sizes": [256, 1024, 2048],
             "bytes_per_token": [1.0, 3.0, 3.0]}
    for curves in ([big, small], [small, big]):
        server = teach_server({}, curves)
        browser.get(server.url + "viewer")
        WebDriverWait(browser, WAIT).until(
            lambda d: d.execute_script("return document.body.dataset.ready"))
        drawn = browser.execute_script("""
            const lines = [...document.querySelectorAll('#curves polyline')];
            const scale = document.querySelector('#curves svg.plot').getBoundingClientRect().width / 760;
            const box = document.querySelector('#curves svg.plot').getBoundingClientRect();
            // The flat stretch from 1,024 to 2,048, where the two lines are one: its midpoint.
            const pts = lines[0].getAttribute('points').split(' ').map((p) => p.split(',').map(Number));
            const x = box.left + (pts[1][0] + pts[2][0]) / 2 * scale, y = box.top + pts[1][1] * scale;
            const width = (l) => Number(l.getAttribute('stroke-width')) * scale;
            const top = (dy) => document.elementsFromPoint(x, y + dy).find((e) => e.tagName === 'polyline');
            const edge = (width(lines[0]) / 2 + width(lines[1]) / 2) / 2;
            return {order: lines.map((l) => l.dataset.model), widths: lines.map(width),
                    centre: top(0).dataset.model, edge: top(edge).dataset.model};""")
        first, second = drawn["order"]
        assert drawn["widths"][0] > drawn["widths"][1] + 2
        # On the line the one drawn last shows; beside it, the wider one drawn first.
        assert drawn["centre"] == second and drawn["edge"] == first, drawn
    shoot(browser, IMAGES / "viewer-curves-overlap.png", browser.find_element(By.ID, "curves"))


def test_errors_are_shown_in_the_page(page):
    page.execute_script("const t = document.getElementById('text'); t.value = 'x'.repeat(1000001);"
                        "t.dispatchEvent(new Event('input'));")
    WebDriverWait(page, WAIT).until(lambda d: "more than the limit" in text_of(d, "#error"))
    assert "Traceback" not in page.find_element(By.ID, "error").text
    # Five models cannot be chosen: only two exist, so ask the server directly for a bad tree.
    answer = page.execute_script(
        "return fetch('/api/viewer/tree', {method: 'POST', body: '{\"model\": \"genesis-300.json\","
        " \"id\": -1}', headers: {'Content-Type': 'application/json'}})"
        ".then(r => r.json().then(j => [r.status, j.error]))")
    assert answer[0] == 400 and answer[1].startswith("id: expected a token ID")


@pytest.mark.skipif(not fastsplit.available(), reason="drawing while scrolling is timed on the compiled install; the pure encoder is too slow for its waits")
def test_a_long_text_is_drawn_as_it_is_scrolled(page, models):
    tok = models["genesis-1500.json"]
    text = GENESIS.read_text("utf-8")[:20_000]
    expected = tok.encode(text)
    chunk = page.execute_script("return CHUNK")
    assert len(expected) > 2 * chunk
    set_text(page, text)
    WebDriverWait(page, WAIT).until(lambda d: text_of(d, ".panel .count") == f"{len(expected):,}")
    assert shown_ids(page) == expected[:chunk]
    assert text_of(page, ".panel .more").startswith(f"{chunk:,} of")
    for _ in range(len(expected) // chunk + 2):  # scroll the token list to its end, again and again
        page.execute_script("const t = document.querySelector('.panel .tokens');"
                            "t.scrollTop = t.scrollHeight; t.dispatchEvent(new Event('scroll'));")
    wait_for_ids(page, expected)
    assert not shown(page, ".panel .more")
    tokens = page.find_elements(By.CSS_SELECTOR, ".panel .tokens > span")
    ids = page.find_elements(By.CSS_SELECTOR, ".panel .ids > span")
    assert len(tokens) == len(ids) == len(expected)
    page.execute_script("arguments[0].scrollIntoView()", tokens[-1])
    ActionChains(page).move_to_element(tokens[-1]).perform()
    assert "hl" in ids[-1].get_attribute("class")


def test_flags_and_stages_in_the_tree(teach_server, browser):
    from bytepair.learn.rules import Merge

    # "bc" first, so "abc" = ("ab", "c") can never form (unreachable); "ab" is always consumed.
    rules = bytepair.ByteModel([Merge(0, 98, 99, 256, 1, 1), Merge(1, 97, 98, 257, 1, 1),
                                Merge(2, 257, 99, 258, 1, 1)])
    hand = bytepair.Tokenizer(rules, ["<s>"])
    superbpe = bytepair.train(["the cat sat on the mat, the cat sat on the hat"] * 20, merges=40,
                              superbpe=256 + 15, progress=False)
    imported = bytepair.Tokenizer(bytepair.ByteModel(
        [Merge(0, 98, 99, 256, 0, 0), Merge(1, 97, 98, 257, 0, 0), Merge(2, 257, 99, 258, 0, 0)]))
    server = teach_server({"hand": hand, "superbpe": superbpe, "imported": imported})
    browser.get(server.url + "viewer")
    WebDriverWait(browser, WAIT).until(lambda d: d.execute_script("return document.body.dataset.ready"))

    def tree(model, token):
        browser.execute_script("showTree(arguments[0], arguments[1])", model, token)
        WebDriverWait(browser, WAIT).until(lambda d: tree_nodes(d) and tree_nodes(d)[0]["id"] == str(token))
        return tree_nodes(browser)

    nodes = tree("hand", 258)
    assert nodes[0]["flags"] == "unreachable"
    assert [n["flags"] for n in nodes if n["id"] == "257"] == ["intermediate-only"]
    assert all(n["unknown"] == "" for n in nodes)  # computed for this model: none unknown
    assert browser.find_element(By.CSS_SELECTOR, "#tree-body .flag.unreachable").text == "unreachable"
    assert tree("hand", 259)[0]["flags"] == "special"
    top = superbpe.model.vocab_size - 1
    stages = {int(n["id"]): n["stage"] for n in tree("superbpe", top) if n["rank"]}
    transition = superbpe.model.stages.transition
    assert stages and all(stage == ("1" if token < transition else "2") for token, stage in stages.items())
    assert "2" in stages.values()
    assert "stage 2" in text_of(browser, "#tree-body")
    # Where intermediate-only cannot be computed (rules without counts, as imported ones carry),
    # it is shown as unknown, not left out (which would read as "not flagged").
    nodes = tree("imported", 258)
    assert [n["unknown"] for n in nodes if n["rank"]] == ["intermediate-only"] * 2
    assert all("intermediate-only" not in n["flags"] for n in nodes)
    assert text_of(browser, "#tree-body .flag.unknown") == "intermediate-only: unknown"


def test_a_hugging_face_tokenizer_shows_its_own_ids(teach_server, browser, tmp_path):
    # A tokenizer.json trained by Hugging Face tokenizers: the page shows that library's IDs.
    from tokenizers import Tokenizer, decoders, models as hf_models, pre_tokenizers, trainers

    from bytepair.teach.viewer import load_viewer_model

    hf = Tokenizer(hf_models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train([str(DATA / "multilingual-sample.txt")], trainers.BpeTrainer(
        vocab_size=800, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"], show_progress=False))
    hf.save(str(tmp_path / "tokenizer.json"))
    name, tok = load_viewer_model(str(tmp_path / "tokenizer.json"))
    assert tok.ids is not None  # numbered as Hugging Face numbers them
    server = teach_server({name: tok})
    browser.get(server.url + "viewer")
    WebDriverWait(browser, WAIT).until(lambda d: d.execute_script("return document.body.dataset.ready"))
    set_text(browser, SCRIPTED, typed=TYPED)
    text = TYPED + SCRIPTED
    wait_for_ids(browser, hf.encode(text).ids)
    # And its merge trees speak the same IDs, down to the byte tokens.
    ids = hf.encode(text).ids
    specials = set(tok.special_tokens.values())
    longest = max((i for i in ids if i not in specials), key=lambda i: len(tok.token_bytes(i)))
    browser.find_elements(By.CSS_SELECTOR, ".panel .tokens > span")[ids.index(longest)].click()
    WebDriverWait(browser, WAIT).until(lambda d: tree_nodes(d) and tree_nodes(d)[0]["id"] == str(longest))
    nodes = tree_nodes(browser)
    leaves = [n for n in nodes if not n["rank"]]
    alphabet = set(pre_tokenizers.ByteLevel.alphabet())  # Hugging Face's byte tokens
    assert len(leaves) > 1 and all(hf.id_to_token(int(n["id"])) in alphabet for n in leaves)
    assert hf.decode([int(n["id"]) for n in leaves]) == hf.decode([longest])
