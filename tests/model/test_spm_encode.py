"""The compiled sentencepiece encoder (``bytepair.model._spm_encode``) equals the Python
reference (``SentencePieceModel.encode`` with ``compiled=False``) and sentencepiece itself.

Each test runs the Python reference always and the compiled encoder when it is built.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

spm = pytest.importorskip("sentencepiece")

from bytepair.formats.spm_file import load_sentencepiece  # noqa: E402
from bytepair.model import spm_model  # noqa: E402
from bytepair.model.spm_model import (BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED,  # noqa: E402
                                      USER_DEFINED, SentencePieceModel)
from helpers import examples  # noqa: E402
from spm_helpers import LLAMA, sample_lines, write_lines  # noqa: E402

#: Whether the compiled encoder is built (and wanted): the tests then compare it too.
COMPILED = spm_model._compiled is not None
needs_compiled = pytest.mark.skipif(not COMPILED, reason="the compiled sentencepiece encoder is not built")

#: Mixed scripts, digits, runs of white space, tabs, NUL, emoji, user-defined symbols and
#: their prefixes, and characters outside the training text (byte fallback, or unknown).
TEXT = st.lists(st.one_of(
    st.sampled_from(list("the and of God said 0123456789    \t\n\x00")),
    st.sampled_from(list("日本語Привет naïve café عربى 😀🎉\u2581\u3000")),
    st.sampled_from(["<tag>", "<t>", "<ta", "<ctl>", "<s>", "thethe", "    ", "\t\t"]),
    st.characters(min_codepoint=0x20, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
    st.characters(min_codepoint=0x10000, max_codepoint=0x1FFFF, exclude_categories=("Cs", "Cn")),
), max_size=40).map("".join)
CONFIGS = {
    "llama": dict(LLAMA, user_defined_symbols=["<tag>", "<t>"]),
    "defaults": dict(user_defined_symbols=["<tag>"], control_symbols=["<ctl>"]),
}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def models(request, tmp_path_factory):
    """(SentencePieceModel, SentencePieceProcessor) of spm_train's model of some verses and
    multilingual lines: Llama-2-like (byte fallback), and spm's defaults (the unknown piece)."""
    folder = tmp_path_factory.mktemp("spm")
    lines = sample_lines("kjv-genesis-exodus.txt", 400) + sample_lines("multilingual-sample.txt", 30)
    with open(os.devnull, "w") as quiet:
        spm.SentencePieceTrainer.train(input=write_lines(lines, str(folder)), model_prefix=str(folder / "m"),
                                       model_type="bpe", vocab_size=700, num_threads=1, logstream=quiet,
                                       **CONFIGS[request.param])
    path = folder / "m.model"
    return load_sentencepiece(path), spm.SentencePieceProcessor(model_file=str(path))


@settings(deadline=None, max_examples=examples(150))
@given(text=TEXT)
def test_hyp_encode_equals_the_reference_and_sentencepiece(models, text):
    model, processor = models
    expected = processor.encode(text)
    assert model.encode(text, compiled=False) == expected
    assert model.encode(text) == expected


@settings(deadline=None, max_examples=examples(100))
@given(texts=st.lists(TEXT, max_size=6))
def test_hyp_segment_words_equals_the_pieces(models, texts):
    model, _ = models
    words = [model.normalize(text) for text in texts]
    pieces = [model.encode_pieces(word) for word in words]
    for compiled in (False, True):
        ids, offsets = model.segment_words(words, compiled=compiled)
        assert list(offsets) == [0] + [sum(map(len, pieces[:k + 1])) for k in range(len(pieces))]
        assert [model.pieces[at][0] if at >= 0 else chr(-1 - at) for at in ids] == \
            [piece for word in pieces for piece in word]


#: Small vocabularies over a tiny alphabet with few distinct scores: ties everywhere, pieces of
#: every type, duplicates (the first ID counts), user-defined symbols that prefix each other.
PIECES = st.lists(st.tuples(st.one_of(st.text("ab", min_size=2, max_size=3), st.text("ab▁<>", min_size=1, max_size=4),
                                      st.sampled_from(["ab", "ba", "aa", "bb"])),
                            st.sampled_from([0.0, -1.0]),
                            st.sampled_from([NORMAL] * 6 + [UNKNOWN, CONTROL, USER_DEFINED, UNUSED])),
                  max_size=25)


@needs_compiled
@settings(deadline=None, max_examples=examples(300))
@given(pieces=PIECES, pairs=st.lists(st.sampled_from([0.0, -1.0]), min_size=4, max_size=4),
       text=st.one_of(st.text("ab", max_size=20), st.text("ab▁<> z", max_size=30)), fallback=st.booleans())
def test_hyp_compiled_equals_the_reference_on_ties(pieces, pairs, text, fallback):
    pieces = [("<unk>", 0.0, UNKNOWN)] + pieces + [(pair, score, NORMAL) for pair, score in zip(
        ["ab", "ba", "aa", "bb"], pairs)]
    if fallback:
        pieces += [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)]
    model = SentencePieceModel(pieces, normalizer={"name": "identity"})
    assert model.encode(text) == model.encode(text, compiled=False)
    words = text.split(" ")
    assert model.segment_words(words) == model.segment_words(words, compiled=False)


def test_equal_scores_merge_the_leftmost_pair_first():
    model = SentencePieceModel([("<unk>", 0.0, UNKNOWN), ("ab", -1.0, NORMAL), ("ba", -1.0, NORMAL),
                                ("a", -2.0, NORMAL), ("b", -2.0, NORMAL)],
                               normalizer={"name": "identity", "add_dummy_prefix": False})
    for compiled in (False, True):
        assert model.encode("aba", compiled=compiled) == [1, 3]
        assert model.encode("bab", compiled=compiled) == [2, 4]


def test_unknown_characters_are_one_unknown_id_per_run_without_byte_fallback():
    model = SentencePieceModel([("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL)],
                               normalizer={"name": "identity", "add_dummy_prefix": False})
    for compiled in (False, True):
        assert model.encode("xya\u00e9\U0001F600a", compiled=compiled) == [0, 1, 0, 1]


def test_without_extensions_the_python_encoder_runs(monkeypatch):
    monkeypatch.setattr(spm_model, "_compiled", None)
    model = SentencePieceModel([("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL)])
    assert model.encoder() is None
    assert model.encode("aa") == [0, 1, 1]
