"""bytepair.extend reads what train reads, and resumes, stops and refuses as train does."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings, strategies as st

import extend_reference as reference
import bytepair
from helpers import KJV, KJV_REST_GZ

LINES = KJV.read_text(encoding="utf-8").splitlines()
with gzip.open(KJV_REST_GZ, "rt", encoding="utf-8") as _handle:
    REST = _handle.read().splitlines()[:4000]


@pytest.fixture(scope="module")
def base_path(tmp_path_factory):
    tok = bytepair.train(LINES, vocab_size=600, special_tokens=["<|endoftext|>"],
                         ties="tokenizers")
    path = tmp_path_factory.mktemp("base") / "tokenizer.json"
    bytepair.to_tokenizers_json(tok, path)
    return path


def rules_of(extension):
    return [(m.left, m.right, m.token_id) for m in extension.rules]


def test_every_way_of_reading_gives_the_same_rules(tmp_path, base_path):
    texts = REST[:2000]
    expected = rules_of(bytepair.extend(base_path, texts, vocab_size=800))
    (tmp_path / "c.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in texts))
    with gzip.open(tmp_path / "c.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("\n".join(texts) + "\n")
    assert rules_of(bytepair.extend(base_path, tmp_path / "c.txt", vocab_size=800,
                                    per_line=True, workers=2)) == expected
    assert rules_of(bytepair.extend(base_path, tmp_path / "c.jsonl", vocab_size=800,
                                    jsonl_field="body")) == expected
    assert rules_of(bytepair.extend(base_path, str(tmp_path / "c.*.gz"), vocab_size=800,
                                    per_line=True)) == expected
    table = bytepair.count(tmp_path / "c.txt", per_line=True, pretokenize="gpt2")
    assert rules_of(bytepair.extend(base_path, table, vocab_size=800)) == expected


def test_a_checkpoint_resumes_to_the_same_rules(tmp_path, base_path):
    (tmp_path / "c.txt").write_text("\n".join(REST) + "\n", encoding="utf-8")
    first = bytepair.extend(base_path, tmp_path / "c.txt", vocab_size=800, per_line=True,
                            checkpoint=tmp_path / "ck")
    again = bytepair.extend(base_path, tmp_path / "c.txt", vocab_size=800, per_line=True,
                            checkpoint=tmp_path / "ck", resume=True)
    assert rules_of(first) == rules_of(again)


def test_min_frequency_stops_early(base_path):
    extension = bytepair.extend(base_path, REST[:200], vocab_size=5000, min_frequency=20)
    assert 0 < extension.added < 4400
    assert all(m.count >= 20 for m in extension.rules)


def test_a_count_table_of_another_pattern_is_refused(base_path):
    table = bytepair.count(REST[:10], pretokenize="cl100k")
    with pytest.raises(ValueError, match="another pattern than the base's"):
        bytepair.extend(base_path, table, vocab_size=700)


@settings(max_examples=20)
@given(st.lists(st.lists(st.sampled_from(["the", " the", "Lord", " ", "é", "<|endoftext|>",
                                          ",", "\n"]), max_size=12).map("".join), max_size=6))
def test_extended_encoding_is_the_base_with_new_merges_in_order(base_path, held_out):
    tokenizers = pytest.importorskip("tokenizers")
    extension = bytepair.extend(base_path, REST[:500] + held_out, vocab_size=700)
    base = extension.base
    document = extension.tokenizers_document()
    loaded = tokenizers.Tokenizer.from_str(json.dumps(document))
    for text in held_out:
        want = []
        for segment in base.segments(text):
            if isinstance(segment, int):
                want.append(segment)
                continue
            for piece in _pieces(segment, base.pattern):
                ids = base.encode_piece(piece)
                for m in extension.rules:
                    ids = reference.replace(ids, (m.left, m.right), m.token_id)
                want.extend(ids)
        assert loaded.encode(text).ids == want


def _pieces(text, pattern):
    """The pieces of ``text`` in order (the reference counts them; this keeps them)."""
    import regex

    return [p.encode() for p in regex.findall(pattern, text) if p]
