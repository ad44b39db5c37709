"""Parity-aware training: equal to Hugging Face's ParityBpeTrainer with ties="tokenizers",
file for file; the options checked in one line each; the command line.

Real text: Debian's translation catalogs (``.mo`` files under /usr/share/locale),
where the same messages are translated into every language.
"""

import glob
import json
import math
import os
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.formats.export import tokenizers_json
from helpers import main

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import models, pre_tokenizers, trainers  # noqa: E402


def parity_trainer_json(train, dev=None, ratio=None, merges=50, specials=(), **options) -> dict:
    """tokenizer.json of ParityBpeTrainer on lists of documents, ByteLevel as bytepair's gpt2."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.ParityBpeTrainer(
        num_merges=merges, special_tokens=list(specials), show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), **options)
    trainer.train_from_iterator(tok, [iter(t) for t in train],
                                dev_iterators=[iter(d) for d in dev] if dev else None,
                                ratio=ratio)
    return json.loads(tok.to_str())


def ours(train, dev=None, ratio=None, merges=50, specials=(), variant="base", **options):
    names = [f"l{i}" for i in range(len(train))]
    tok = bytepair.train(
        dict(zip(names, train)), merges=merges, parity=variant, ties="tokenizers",
        special_tokens=list(specials), progress=False,
        dev=dict(zip(names, dev)) if dev else None,
        ratio=dict(zip(names, ratio)) if ratio else None, **options)
    return tokenizers_json(tok)


def assert_same_model(a: dict, b: dict) -> None:
    assert json.dumps(a["model"], ensure_ascii=False) == json.dumps(b["model"], ensure_ascii=False)
    assert a["added_tokens"] == b["added_tokens"]


LETTERS = [["a", "b", " "], ["é", "e", " "], ["日", "本"], ["н", "и", " "], ["a", "😀"]]


@st.composite
def texts(draw, letters):
    document = st.one_of(st.lists(st.sampled_from(letters), min_size=1, max_size=16).map("".join),
                         st.builds(lambda c, n: c * n, st.sampled_from(letters), st.integers(1, 9)))
    return draw(st.lists(document, min_size=1, max_size=5))


@st.composite
def setups(draw):
    n = draw(st.integers(2, 4))
    alphabets = [draw(st.sampled_from(LETTERS)) for _ in range(n)]
    train = [draw(texts(a)) for a in alphabets]
    options = {}
    if draw(st.booleans()):
        options["dev"] = [draw(texts(a)) for a in alphabets]
    else:
        options["ratio"] = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n))
    # Only base here: ParityBpeTrainer's window search can loop forever once languages
    # run out of pairs (docs/parity.md); window is compared on real text below.
    variant = "base"
    options["global_merges"] = draw(st.sampled_from([0, 0, 3]))
    return train, variant, options, draw(st.integers(0, 40))


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=40)
@given(setups())
def test_hyp_tokenizer_json_equals_parity_bpe_trainer(setup):
    train, variant, options, merges = setup
    theirs = parity_trainer_json(train, merges=merges, variant=variant, **options)
    # ParityBpeTrainer stops short when every language is out of pairs; so does bytepair.
    assert_same_model(ours(train, merges=merges, variant=variant, **options), theirs)


def test_special_tokens_come_first_as_in_parity_bpe_trainer():
    train, dev = [["ab ab", "abc"], ["日本日本"]], [["ab"], ["日本"]]
    theirs = parity_trainer_json(train, dev, merges=6, specials=["<s>", "<pad>"])
    assert_same_model(ours(train, dev, merges=6, specials=["<s>", "<pad>"]), theirs)


def test_ties_follow_the_greatest_strings():
    # Three pairs seen once: ParityBpeTrainer takes the greatest strings, ('b', 'b');
    # bytepair's own order the smallest IDs, ('a', 'b').
    model = ours([["abba"], ["c"]], dev=[["abba"], ["c"]], merges=1)["model"]
    assert model["merges"] == [["b", "b"]]
    plain = bytepair.train({"x": ["abba"], "y": ["c"]}, merges=1, parity="base",
                           dev={"x": ["abba"], "y": ["c"]})
    assert [(m.left, m.right) for m in plain.merges] == [(97, 98)]


# -- Real text: Debian's translation catalogs ------------------------------------------


def read_mo(path: str) -> dict[bytes, bytes]:
    """A gettext catalog's messages (msgid -> msgstr); GNU .mo is a table of offsets."""
    data = Path(path).read_bytes()
    order = "<" if struct.unpack("<I", data[:4])[0] == 0x950412DE else ">"
    _, n, originals, translations = struct.unpack(order + "4I", data[4:20])
    out = {}
    for i in range(n):
        length, offset = struct.unpack(order + "2I", data[originals + 8 * i: originals + 8 * i + 8])
        tlength, toffset = struct.unpack(order + "2I",
                                         data[translations + 8 * i: translations + 8 * i + 8])
        out[data[offset:offset + length]] = data[toffset:toffset + tlength]
    return out


LOCALES = {"en": "ru", "ru": "ru", "zh": "zh_CN", "el": "el", "ja": "ja"}  # en: msgids


def catalog_lines(language: str, domains: list[str]) -> list[str]:
    lines = []
    for domain in domains:
        path = f"/usr/share/locale/{LOCALES[language]}/LC_MESSAGES/{domain}"
        if not os.path.exists(path):
            continue
        for msgid, msgstr in sorted(read_mo(path).items()):
            text = msgid if language == "en" else msgstr
            if msgid and msgstr:
                lines.extend(t for t in text.decode("utf-8", "replace").split("\n") if t)
    return lines


@pytest.fixture(scope="module")
def catalogs():
    needed = ["coreutils.mo", "tar.mo", "sed.mo", "grep.mo"]
    for locale in set(LOCALES.values()):
        if not all(os.path.exists(f"/usr/share/locale/{locale}/LC_MESSAGES/{d}") for d in needed):
            pytest.skip(f"Debian's {locale} catalogs of coreutils, tar, sed and grep are not installed")
    languages = ["en", "ru", "zh", "el"]  # Latin, Cyrillic, Han, Greek
    train = [catalog_lines(lang, needed[:3]) for lang in languages]
    dev = [catalog_lines(lang, needed[3:]) for lang in languages]
    return train, dev


@pytest.mark.slow
@pytest.mark.parametrize("variant, options", [
    ("base", {"dev": True}),
    ("base", {"ratio": [1.0, 1.5, 0.8, 1.2]}),
    ("window", {"dev": True}),
    ("window", {"dev": True, "window_size": 20, "alpha": 1.0}),
    ("window", {"ratio": [1.0, 1.5, 0.8, 1.2]}),
    ("base", {"dev": True, "global_merges": 300}),
])
def test_real_text_in_four_scripts_equals_parity_bpe_trainer(catalogs, variant, options):
    train, dev = catalogs
    options = dict(options)
    if options.pop("dev", False):
        options["dev"] = dev
    theirs = parity_trainer_json(train, merges=2000, variant=variant, **options)
    assert_same_model(ours(train, merges=2000, variant=variant, **options), theirs)


# -- Options, checked in one line ---------------------------------------------------------

TRAIN = {"en": ["the cat sat", "the dog"], "ru": ["кошка сидела", "собака"]}
DEV = {"en": ["the cat"], "ru": ["кошка"]}


@pytest.mark.parametrize("options, message", [
    (dict(parity="base", dev={"en": ["x"]}), "dev: missing for ru"),
    (dict(parity="base", dev={**DEV, "fr": ["x"]}), "dev: fr is not a training language"),
    (dict(parity="base", ratio={"en": 1.0, "ru": 0}), "ratio: ru's target must be a positive"),
    (dict(parity="base", ratio={"en": 1.0, "ru": -2}), "ratio: ru's target must be a positive"),
    (dict(parity="base", ratio={"en": 1.0, "ru": math.nan}), "ratio: ru's target"),
    (dict(parity="base", dev=DEV, ratio={"en": 1.0, "ru": 1.0}), "give dev .* or ratio"),
    (dict(parity="base"), "give dev .* or ratio"),
    (dict(parity="window", dev=DEV, window_size=0), "window_size must be >= 1"),
    (dict(parity="window", dev=DEV, alpha=0.0), "alpha must be a positive"),
    (dict(parity="sideways", dev=DEV), "parity must be 'base' or 'window'"),
    (dict(dev=DEV), "a dict of languages is for parity-aware training"),
    (dict(parity="base", dev=DEV, superbpe=280), "superbpe: not available with parity"),
])
def test_bad_options_are_one_line(options, message):
    with pytest.raises(ValueError, match=message):
        bytepair.train(TRAIN, vocab_size=300, progress=False, **options)


def test_a_language_without_text_is_named():
    with pytest.raises(ValueError, match="corpus: ru has no text"):
        bytepair.train({"en": ["the cat"], "ru": [""]}, vocab_size=300, parity="base", dev=DEV)
    with pytest.raises(ValueError, match="dev: en has no text"):
        bytepair.train(TRAIN, vocab_size=300, parity="base", dev={"en": [], "ru": ["x"]})


def test_with_ratio_a_language_without_text_is_refused_and_one_without_pairs_exhausted():
    """docs/parity.md: no text is bad input, with ratio as with dev; text without a pair
    (one-character documents) is a language exhausted from the start."""
    ratio = {"en": 1.0, "l1": 1.0}
    for empty in ([], [""]):
        with pytest.raises(ValueError, match="^corpus: l1 has no text$"):
            bytepair.train({"en": ["the cat the hat"], "l1": empty}, vocab_size=300,
                           parity="base", ratio=ratio, progress=False)
    english = ["the cat sat on the hat"] * 3
    tok = bytepair.train({"en": english, "l1": ["a", "b", "c"]}, vocab_size=300, parity="base",
                         ratio=ratio, progress=False)
    alone = bytepair.train(english, vocab_size=300, progress=False)
    assert tok.merges == alone.merges  # every rule is English's, as plain BPE learns them


def test_the_command_line_names_the_language_option(tmp_path):
    """A real process: one line naming --language (or --dev) and the language, no file."""
    import subprocess
    import sys

    (tmp_path / "en.txt").write_text("the cat sat on the hat\n" * 3)
    (tmp_path / "empty.txt").write_text("")
    common = [sys.executable, "-m", "bytepair", "train", "--parity", "base", "--vocab-size",
              "300", "-o", str(tmp_path / "out.json"), "--language", f"en={tmp_path / 'en.txt'}"]
    for extra, line in [
        (["--language", f"l1={tmp_path / 'empty.txt'}", "--ratio", "en=1", "--ratio", "l1=1"],
         "bytepair: error: --language l1: has no text (every language needs some, with --ratio too)"),
        (["--language", f"l1={tmp_path / 'en.txt'}", "--dev", f"en={tmp_path / 'en.txt'}",
          "--dev", f"l1={tmp_path / 'empty.txt'}"], "bytepair: error: --dev l1: has no text"),
    ]:
        done = subprocess.run(common + extra, capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == (2, "", line + "\n")
        assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("option", [dict(dev=DEV), dict(global_merges=2), dict(window_size=5),
                                    dict(alpha=1.0), dict(ratio={"en": 1.0})])
def test_a_parity_option_without_parity_is_refused(option):
    with pytest.raises(ValueError, match="a parity option"):
        bytepair.train(["the cat"], vocab_size=300, **option)


def test_workers_one_equals_two(tmp_path):
    for lang, docs in TRAIN.items():
        (tmp_path / f"{lang}.txt").write_text("\n".join(docs * 20))
    files = {lang: str(tmp_path / f"{lang}.txt") for lang in TRAIN}
    one, two = (bytepair.train(files, vocab_size=320, parity="base", dev=DEV, workers=w,
                               per_line=True) for w in (1, 2))
    assert one.merges == two.merges


def test_truncation_equals_training_to_the_smaller_size():
    big = bytepair.train(TRAIN, vocab_size=300, parity="window", dev=DEV, window_size=3)
    small = bytepair.train(TRAIN, vocab_size=280, parity="window", dev=DEV, window_size=3)
    assert big.truncate(280).merges == small.merges


# -- Command line -------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path):
    for lang, docs in TRAIN.items():
        (tmp_path / f"{lang}.txt").write_text("\n".join(docs) + "\n")
        (tmp_path / f"{lang}.dev").write_text("\n".join(DEV[lang]) + "\n")
    return tmp_path


def test_cli_equals_the_library(corpus):
    out = corpus / "m.json"
    assert main(["train", "--parity", "base", "--language", f"en={corpus / 'en.txt'}",
                 "--language", f"ru={corpus / 'ru.txt'}", "--dev", f"en={corpus / 'en.dev'}",
                 "--dev", f"ru={corpus / 'ru.dev'}", "--vocab-size", "280", "--per-line",
                 "-q", "-o", str(out)]) == 0
    expected = bytepair.train({lang: str(corpus / f"{lang}.txt") for lang in TRAIN},
                              vocab_size=280, parity="base", per_line=True,
                              dev={lang: str(corpus / f"{lang}.dev") for lang in TRAIN})
    assert bytepair.load(out).merges == expected.merges


@pytest.mark.parametrize("extra, message", [
    (["--dev", "en=DIR/en.dev"], "--language: a parity option"),
    (["--parity", "base", "--ratio", "en=0", "--ratio", "ru=1"], "ratio: en's target"),
    (["--parity", "base", "--ratio", "en=x", "--ratio", "ru=1"], "--ratio: en's target must be a number"),
    (["--parity", "base", "--dev", "en=DIR/en.dev"], "dev: missing for ru"),
    (["--parity", "window", "--window-size", "0", "--dev", "en=DIR/en.dev",
      "--dev", "ru=DIR/ru.dev"], "window_size must be >= 1"),
    (["--parity", "base", "--ratio", "en=1", "--ratio", "en=2"], "--ratio: en is given twice"),
])
def test_cli_bad_input_is_one_line_and_no_file(corpus, capsys, extra, message):
    out = corpus / "m.json"
    args = ["train", "--language", f"en={corpus / 'en.txt'}", "--language",
            f"ru={corpus / 'ru.txt'}", "--vocab-size", "280", "-o", str(out)]
    args += [a.replace("DIR", str(corpus)) for a in extra]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message.split(": ")[-1][:20] in err and err.count("\n") == 1
    assert not out.exists()
