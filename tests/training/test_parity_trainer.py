"""Parity-aware training and ties as parts of the spec: the object shape equals train()."""

import pytest

import bytepair
from bytepair.training import (ParityAwareTrainer, ParityOptions, SuperBPEOptions, TrainSpec,
                                Trainer, trainer_for)

CORPUS = {"en": ["the cat sat on the mat"] * 3, "el": ["η γάτα κάθισε στο χαλί"] * 3}


@pytest.mark.parametrize("ties", ["bytepair", "tokenizers"])
def test_the_spec_s_trainer_equals_train(ties):
    options = ParityOptions("window", ratio={"en": 1.0, "el": 2}, window_size=3)
    spec = TrainSpec(vocab_size=300, parity=options, ties=ties)
    assert isinstance(trainer_for(spec), ParityAwareTrainer)
    fitted = trainer_for(spec).fit(CORPUS)
    assert fitted == bytepair.train(CORPUS, vocab_size=300, parity="window", ratio=options.ratio,
                                    window_size=3, ties=ties)
    assert len(fitted.merges) > 0


def test_without_parity_the_trainer_is_the_byte_mode_one_and_refuses_languages():
    trainer = trainer_for(TrainSpec(merges=5))
    assert type(trainer) is Trainer
    with pytest.raises(ValueError, match="^corpus: a dict of languages is for parity"):
        trainer.fit(CORPUS)


@pytest.mark.parametrize(("options", "message"), [
    (dict(variant="both", ratio={"en": 1}), "^parity must be 'base' or 'window'"),
    (dict(variant="base"), "^parity: give dev .* or ratio"),
    (dict(variant="base", ratio=[1.0]), "^ratio: a dict of languages"),
    (dict(variant="base", ratio={"en": float("nan")}), "^ratio: en's target must be a positive"),
    (dict(variant="base", dev=["x"]), "^dev: a dict of languages"),
    (dict(variant="window", ratio={"en": 1}, window_size=0), "^window_size must be"),
    (dict(variant="window", ratio={"en": 1}, alpha=0.0), "^alpha must be a positive"),
    (dict(variant="base", ratio={"en": 1}, global_merges=-1), "^global_merges must be"),
])
def test_parity_options_are_checked_when_made(options, message):
    with pytest.raises(ValueError, match=message):
        ParityOptions(**options)


@pytest.mark.parametrize(("spec", "message"), [
    (dict(superbpe=SuperBPEOptions(300)), "^superbpe: not available with parity"),
])
def test_a_spec_refuses_what_parity_cannot_do(spec, message):
    with pytest.raises(ValueError, match=message):
        TrainSpec(merges=5, parity=ParityOptions("base", ratio={"en": 1}), **spec)


def test_ties_is_a_checked_field_of_the_spec_and_of_its_identity():
    assert TrainSpec(merges=5, ties=None).ties == "bytepair"
    with pytest.raises(ValueError, match="^ties must be one of"):
        TrainSpec(merges=5, ties="hf")
    with pytest.raises(ValueError, match="^superbpe: ties='tokenizers'"):
        TrainSpec(vocab_size=400, superbpe=bytepair.training.SuperBPEOptions(300), ties="tokenizers")
    table = bytepair.count(["ab ab"])
    plain = TrainSpec(merges=5).identity(table)
    assert "ties" not in plain  # older checkpoints stay valid
    assert TrainSpec(merges=5, ties="tokenizers").identity(table) == {**plain, "ties": "tokenizers"}


# -- A parity model is a model like any other: it truncates, saves, loads and evaluates ----

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Pairs shared by the languages, with more of them in the language that does not choose.
SHARED = {"x": ["aaab aaab", "ab"], "y": ["ab ab ab ab", "cd"]}
SHARED_DEV = {"x": ["aaab"], "y": ["ab"]}


def _round_trip(tok, tmp_path):
    path = tmp_path / "parity.json"
    tok.save(path)
    loaded = bytepair.load(path)
    assert loaded.merges == tok.merges
    for rule in tok.merges:
        assert 0 <= rule.replacements <= rule.count
    for size in range(256, tok.vocab_size + 1):
        assert tok.truncate(size).vocab_size <= size


def test_a_parity_model_with_pairs_shared_by_languages_saves_loads_and_truncates(tmp_path):
    for options in (dict(dev=SHARED_DEV), dict(ratio={"x": 1.0, "y": 1.0}),
                    dict(dev=SHARED_DEV, global_merges=1)):
        tok = bytepair.train(SHARED, vocab_size=262, parity="base", pretokenize=None, **options)
        _round_trip(tok, tmp_path)
    report = bytepair.evaluate(tok, {"x": SHARED_DEV["x"], "y": SHARED_DEV["y"]}, sizes=[258, 260])
    assert {258, 260} <= {row["vocab_size"] for row in report.rows}


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from("xyz"),
                       st.lists(st.text("ab é", max_size=12), min_size=1, max_size=4),
                       min_size=2, max_size=3),
       st.sampled_from(["base", "window"]), st.integers(0, 3))
def test_every_parity_model_round_trips(tmp_path_factory, corpus, variant, global_merges):
    dev = {language: docs[:1] for language, docs in corpus.items()}
    try:
        tok = bytepair.train(corpus, vocab_size=270, parity=variant, dev=dev, pretokenize=None,
                             global_merges=global_merges, window_size=2)
    except ValueError as error:  # a language with no text at all is refused
        assert "no text" in str(error)
        return
    _round_trip(tok, tmp_path_factory.mktemp("m"))


# -- Count tables stand for a language's text, as in plain training --------------------------

def test_count_tables_per_language_equal_the_text_they_count():
    text = {"en": ["the cat sat on the mat", "a cat"] * 3, "el": ["η γάτα κάθισε στο χαλί"] * 3}
    dev = {"en": ["the cat"], "el": ["η γάτα"]}
    expected = bytepair.train(text, vocab_size=300, parity="base", dev=dev)
    tables = {"en": [bytepair.count(text["en"][:2]), bytepair.count(text["en"][2:])],
              "el": bytepair.count(text["el"])}
    for dev_given in (dev, {"en": bytepair.count(dev["en"]), "el": dev["el"]}):
        got = bytepair.train(tables, vocab_size=300, parity="base", dev=dev_given)
        assert got.merges == expected.merges and got.pattern == expected.pattern
    by_ratio = bytepair.train(text, vocab_size=300, parity="window", ratio={"en": 1, "el": 1.5})
    assert bytepair.train(tables, vocab_size=300, parity="window",
                          ratio={"en": 1, "el": 1.5}).merges == by_ratio.merges


def test_count_tables_take_their_pattern_and_a_conflict_names_the_language():
    text = {"en": ["the cat's mat"] * 3, "el": ["η γάτα"] * 3}
    cl100k = {language: bytepair.count(docs, pretokenize="cl100k") for language, docs in text.items()}
    expected = bytepair.train(text, vocab_size=290, parity="base", ratio={"en": 1, "el": 1},
                              pretokenize="cl100k")
    got = bytepair.train(cl100k, vocab_size=290, parity="base", ratio={"en": 1, "el": 1})
    assert got.merges == expected.merges and got.pattern == expected.pattern
    mixed = {"en": cl100k["en"], "el": bytepair.count(text["el"])}
    with pytest.raises(ValueError, match="^corpus: el's counts were cut with"):
        bytepair.train(mixed, vocab_size=290, parity="base", ratio={"en": 1, "el": 1})
    with pytest.raises(ValueError, match="^corpus: en's counts were cut with"):
        bytepair.train(cl100k, vocab_size=290, parity="base", ratio={"en": 1, "el": 1},
                       pretokenize="gpt2")
