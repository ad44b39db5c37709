"""bytepair.evaluate and its checks, held equal to plain computations from token lists.

Every metric is recomputed here from the lists of IDs that encoding with each
truncated tokenizer gives, so the one-pass curve (counts shrunk rule by rule)
is tested against encoding at each size.
"""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

import bytepair
from bytepair.evaluation import checks, metrics
from bytepair.evaluation.report import evaluate
from bytepair.learn.rules import Merge, replace_pair
from bytepair.model import _encode_py, codec
from bytepair.split.pretokenize import PATTERNS, splitter
from helpers import examples, KJV, MULTILINGUAL

try:  # in the test extra; only the tests that compare with it need it
    import tokenization_scorer
except ImportError:  # pragma: no cover - a partial install
    tokenization_scorer = None
needs_scorer = pytest.mark.skipif(tokenization_scorer is None,
                                  reason="tokenization-scorer is not installed")

# Tiny alphabets: ties and runs are the common case; "é" and "€" are multi-byte.
TEXT = st.text(alphabet="ab é€\n", max_size=24)
DOCS = st.lists(TEXT, min_size=1, max_size=6)


def _scorer_renyi(lists: list[list[int]], power: float, vocab: int | None = None) -> float:
    """tokenization-scorer on the same token stream (IDs as words, one line per text)."""
    lines = [[str(token) for token in ids] for ids in lists if ids]
    options = {"vocab": vocab} if vocab is not None else {}
    return tokenization_scorer.score(lines, metric="renyi", power=power, **options)


def _plain_row(tok: bytepair.Tokenizer, texts: list[str], full: bool) -> dict:
    """Every metric of one row, from the lists of IDs and nothing else."""
    lists = [tok.encode_ordinary(text) for text in texts]
    ids = [token for one in lists for token in one]
    vocab = tok.model.vocab_size
    used = set(ids)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_chars = sum(len(t) for t in texts)
    n_words = sum(len(t.split()) for t in texts)
    freq = Counter(ids)
    observed = len(freq)
    denominator = vocab if full else observed
    renyi = None
    if ids and denominator > 1:
        total = len(ids)
        renyi = (math.log2(sum((c / total) ** 2.5 for c in freq.values())) / (1 - 2.5)
                 / math.log2(denominator))
    return {
        "tokens": len(ids),
        "bytes_per_token": n_bytes / len(ids) if ids else None,
        "characters_per_token": n_chars / len(ids) if ids else None,
        "tokens_per_word": len(ids) / n_words if n_words else None,
        "utilization": len(used) / vocab,
        "renyi": renyi,
        "unused": [t for t in range(vocab) if t not in used],
        "lists": lists,
    }


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=examples(60))
@given(train_docs=DOCS, held_out=DOCS, merges=st.integers(0, 14), special=st.booleans(),
       full=st.booleans(), pattern=st.sampled_from(["gpt2", None]), data=st.data())
def test_hyp_rows_equal_plain_metrics_at_every_size(train_docs, held_out, merges, special,
                                                    full, pattern, data):
    if not "".join(train_docs):
        train_docs = train_docs + ["ab"]
    tok = bytepair.train(train_docs, merges=merges, pretokenize=pattern, progress=False,
                         special_tokens=["<s>"] if special else ())
    least = 256 + len(tok.special_tokens)
    sizes = data.draw(st.lists(st.integers(least, tok.vocab_size), max_size=3))
    table = evaluate(tok, {"held": held_out}, sizes=sizes, full_vocabulary=full)
    assert [r["vocab_size"] for r in table.rows] == sorted(set(sizes) | {tok.vocab_size})
    for row in table.rows:
        plain = _plain_row(tok.truncate(row["vocab_size"]), held_out, full)
        assert row["tokens"] == plain["tokens"]
        assert row["unused"] == plain["unused"] and row["unused_count"] == len(plain["unused"])
        for key in ("bytes_per_token", "characters_per_token", "tokens_per_word",
                    "utilization", "renyi"):
            assert _close(row[key], plain[key]), (key, row[key], plain[key])


@needs_scorer
@settings(max_examples=40)
@given(train_docs=DOCS, held_out=DOCS, merges=st.integers(1, 14))
def test_hyp_renyi_equals_tokenization_scorer(train_docs, held_out, merges):
    tok = bytepair.train(train_docs + ["abab éé"], merges=merges, pretokenize="gpt2",
                         progress=False)
    lists = [tok.encode_ordinary(text) for text in held_out]
    if len({t for ids in lists for t in ids}) < 2:
        return  # undefined: the scorer divides by log2(1) = 0
    for full in (False, True):
        row = evaluate(tok, {"held": held_out}, full_vocabulary=full).rows[0]
        expected = _scorer_renyi(lists, 2.5, tok.model.vocab_size if full else None)
        assert math.isclose(row["renyi"], expected, rel_tol=1e-12)


@needs_scorer
def test_renyi_equals_tokenization_scorer_on_real_text():
    tok = bytepair.train(KJV, vocab_size=600, per_line=True, progress=False)
    texts = MULTILINGUAL.read_text("utf-8").splitlines()
    row = evaluate(tok, {"multi": texts}).rows[0]
    lists = [tok.encode_ordinary(text) for text in texts]
    assert math.isclose(row["renyi"], _scorer_renyi(lists, 2.5), rel_tol=1e-12)
    assert row["tokens"] == sum(map(len, lists))


@settings(max_examples=40)
@given(samples=st.lists(DOCS, min_size=2, max_size=4), merges=st.integers(0, 10))
def test_hyp_parity_and_gini_equal_plain(samples, merges):
    tok = bytepair.train(["ab abé €€ b"], merges=merges, progress=False)
    named = {f"l{i}": texts for i, texts in enumerate(samples)}
    table = evaluate(tok, named, reference="l1")
    tokens = {label: sum(len(tok.encode_ordinary(t)) for t in texts) for label, texts in named.items()}
    n_bytes = {label: sum(len(t.encode()) for t in texts) for label, texts in named.items()}
    (entry,) = table.parity
    assert entry["reference"] == "l1"
    for label in named:
        assert entry["parity"][label] == (tokens[label] / tokens["l1"] if tokens["l1"] else None)
    if all(n_bytes.values()):
        per_byte = [tokens[label] / n_bytes[label] for label in named]
        mean = sum(per_byte) / len(per_byte)
        plain = sum(abs(x - y) for x in per_byte for y in per_byte) / (2 * len(per_byte) ** 2 * mean)
        assert math.isclose(entry["gini"], plain, rel_tol=1e-9, abs_tol=1e-12)
    else:
        assert entry["gini"] is None
    counts = list(tokens.values())
    if sum(counts):
        mean = sum(counts) / len(counts)
        plain = sum(abs(x - y) for x in counts for y in counts) / (2 * len(counts) ** 2 * mean)
        assert math.isclose(entry["gini_tokens"], plain, rel_tol=1e-9, abs_tol=1e-12)
    else:
        assert entry["gini_tokens"] is None


def test_gini_of_tokens_by_hand():
    # Bytes only: "ab" costs 2 tokens, "abcd" 4. Per byte both cost 1 (Gini 0); in tokens the
    # mean absolute difference over the four ordered pairs is (0 + 2 + 2 + 0) / 4 = 1 and the
    # mean is 3, so the Gini is 1 / (2 * 3) = 1/6.
    tok = bytepair.train(["ab"], merges=0, progress=False)
    (entry,) = evaluate(tok, {"en": ["ab"], "fr": ["abcd"]}).parity
    assert entry["parity"] == {"en": 1.0, "fr": 2.0}
    assert entry["gini"] == 0.0
    assert math.isclose(entry["gini_tokens"], 1 / 6, rel_tol=1e-12)


def test_unlabelled_samples_have_no_parity(tmp_path):
    (tmp_path / "a.txt").write_text("ab ab", "utf-8")
    (tmp_path / "b.txt").write_text("ba", "utf-8")
    tok = bytepair.train(["ab ab ba"], merges=2, progress=False)
    table = evaluate(tok, [tmp_path / "a.txt", tmp_path / "b.txt"])
    assert table.parity == [] and [s["labelled"] for s in table.samples] == [False, False]
    assert [r["sample"] for r in table.rows] == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]


def test_whole_file_read_in_blocks_counts_as_the_file_encoded_whole(tmp_path, monkeypatch):
    from bytepair.evaluation import samples as sample_module
    text = MULTILINGUAL.read_text("utf-8") * 3
    path = tmp_path / "sample.txt"
    path.write_text(text, "utf-8")
    tok = bytepair.train(KJV, vocab_size=500, per_line=True, progress=False)
    # Small blocks and batches: many cut points, many batches.
    monkeypatch.setattr(sample_module, "BLOCK_BYTES", 1 << 10)
    monkeypatch.setattr(sample_module, "BATCH_CHARS", 1 << 11)
    table = evaluate(tok, [path, KJV], threads=2)
    assert table.rows[0]["tokens"] == len(tok.encode_ordinary(text))
    # Each file is one document, however many blocks it was read in.
    assert [sample["documents"] for sample in table.samples] == [1, 1]
    assert table_sample(evaluate(tok, [path]))["words"] == len(text.split())
    per_line = table_sample(evaluate(tok, [path], per_line=True))
    assert per_line["documents"] == len(text.splitlines())


def table_sample(table) -> dict:
    (sample,) = table.samples
    return sample


# -- the training curve and the checks -----------------------------------------

def _pieces(docs: list[str], pattern: str | None) -> Counter:
    """The training pieces and their weights, split here independently of the trainer."""
    if pattern is None:
        return Counter(doc.encode() for doc in docs if doc)
    cut = splitter(PATTERNS[pattern])
    return Counter(piece.encode() for doc in docs for piece in cut(doc))


@settings(max_examples=examples(60))
@given(docs=DOCS, merges=st.integers(0, 16), pattern=st.sampled_from(["gpt2", None]))
def test_hyp_training_curve_and_intermediate_equal_encoding_the_training_pieces(docs, merges, pattern):
    if not "".join(docs):
        docs = docs + ["aa"]
    tok = bytepair.train(docs, merges=merges, pretokenize=pattern, progress=False)
    pieces = _pieces(docs, pattern)
    total = sum(len(piece) * n for piece, n in pieces.items())
    saved = checks.tokens_saved(tok.merges)
    for k in range(len(tok.merges) + 1):
        small = tok.model.truncate(k)
        encoded = sum(len(small.encode_piece(p)) * n for p, n in pieces.items())
        assert encoded == total - saved[k]
    # Final counts of the learned tokens, from the rules alone, against counting the encoding.
    emitted = Counter()
    for piece, n in pieces.items():
        for token in tok.model.encode_piece(piece):
            emitted[token] += n
    finals = checks.final_training_counts(tok.merges)
    assert finals == [emitted[256 + r] for r in range(len(tok.merges))]
    assert checks.intermediate_tokens(tok.merges) == [
        256 + r for r in range(len(tok.merges)) if not emitted[256 + r]]
    counts = checks.intermediate_counts(tok.merges, list(range(len(tok.merges) + 1)))
    for k in range(len(tok.merges) + 1):
        assert counts[k] == len(checks.intermediate_tokens(tok.merges[:k]))


@settings(max_examples=examples(60))
@given(docs=st.lists(st.binary(max_size=12).map(lambda b: bytes(x % 3 + 97 for x in b)),
                     min_size=1, max_size=5), merges=st.integers(0, 12))
def test_hyp_final_counts_equal_the_sequences_train_bytes_keeps(docs, merges):
    model = bytepair.train_bytes(docs, merges)
    emitted = Counter(token for seq in model.sequences for token in seq)
    assert checks.final_training_counts(model.merges) == [
        emitted[256 + r] for r in range(len(model.merges))]


def _brute_unreachable(model: bytepair.ByteModel) -> list[int]:
    """Replay every rule in rank order over each token's bytes, one pass per rule."""
    out = []
    for token in range(256, model.vocab_size):
        seq = list(model.token_bytes(token))
        for m in model.merges:
            seq, _ = replace_pair(seq, m.left, m.right, m.token_id)
        if seq != [token]:
            out.append(token)
    return out


def test_hand_built_model_has_the_known_unreachable_token():
    # "bc" is learned before "ab", so the bytes of "abc" = ("ab", "c") always become a + "bc".
    rules = [Merge(0, 98, 99, 256, 4, 2), Merge(1, 97, 98, 257, 3, 3),
             Merge(2, 257, 99, 258, 1, 1)]
    model = bytepair.ByteModel(rules)
    assert checks.unreachable_tokens(model) == [258] == _brute_unreachable(model)
    table = evaluate(model, checks=True)
    (check,) = table.checks
    assert check["unreachable"] == [{"id": 258, "rank": 2, "hex": b"abc".hex(), "text": "abc"}]
    assert [t["unreachable_count"] for t in table.training] == [1]


def test_real_model_checks_equal_brute_force():
    tok = bytepair.train(KJV, vocab_size=256 + 400, per_line=True, progress=False)
    assert checks.unreachable_tokens(tok.model) == _brute_unreachable(tok.model)
    # Intermediate-only: encode every training piece, weighted, and see which tokens never appear.
    counts = bytepair.count(KJV, per_line=True, progress=False)
    emitted = Counter()
    for piece, n in counts.items():
        for token in tok.model.encode_piece(piece):
            emitted[token] += n
    expected = [t for t in range(256, tok.vocab_size) if not emitted[t]]
    assert checks.intermediate_tokens(tok.merges) == expected
    assert expected, "the real model should have some intermediate-only tokens"
    (check,) = evaluate(tok, checks=True).checks
    assert [e["id"] for e in check["intermediate"]] == expected
    assert all(e["rank"] == e["id"] - 256 for e in check["intermediate"])


def test_checks_unknown_without_replacement_counts():
    model = bytepair.ByteModel([Merge(0, 97, 97, 256, 0, 0)])
    assert checks.intermediate_tokens(model.merges) is None
    assert checks.tokens_saved(model.merges) is None
    table = evaluate(model, checks=True)
    assert table.checks[0]["intermediate"] is None
    assert "unknown" in str(table)


# -- the table, counting, options ---------------------------------------------

def test_to_json_round_trips_and_text_names_every_sample():
    tok = bytepair.train(["low lower lowest"] * 3, merges=6, progress=False)
    table = evaluate({"small": tok.truncate(258), "big": tok},
                     {"en": ["lowest"], "de": ["niedrig"]}, checks=True)
    data = json.loads(table.to_json())
    assert {r["model"] for r in data["rows"]} == {"small", "big"}
    assert [p["reference"] for p in data["parity"]] == ["en", "en"]
    text = str(table)
    assert "model small" in text and "model big" in text and "de" in text


def test_step_gives_every_multiple_and_the_full_size():
    tok = bytepair.train(["abcdefgh" * 4, "hgfedcba"], merges=20, progress=False)
    assert tok.vocab_size == 272  # training ran out of pairs at 16 merges
    table = evaluate(tok, {"x": ["abcd"]}, step=5)
    assert [r["vocab_size"] for r in table.rows] == [260, 265, 270, 272]
    table = evaluate(bytepair.Tokenizer(tok.model, ["<a>", "<b>", "<c>", "<d>"]), {"x": ["ab"]}, step=5)
    assert [r["vocab_size"] for r in table.rows] == [260, 265, 270, 275, 276]


@pytest.mark.parametrize("kwargs, message", [
    ({"sizes": [255]}, "sizes: 255 is not a vocabulary size"),
    ({"sizes": [10**6]}, "sizes: 1000000 is not a vocabulary size"),
    ({"step": 0}, "step must be"),
    ({"reference": "zz"}, "reference: 'zz' is not the label"),
    ({"power": 1}, "power must be"),
])
def test_bad_arguments_name_themselves(kwargs, message):
    tok = bytepair.train(["abab"], merges=2, progress=False)
    with pytest.raises(ValueError, match=message):
        evaluate(tok, {"x": ["ab"]}, **kwargs)


def test_bad_samples_and_models():
    tok = bytepair.train(["abab"], merges=2, progress=False)
    with pytest.raises(TypeError, match=r"samples\['x'\]\[1\] must be a str"):
        evaluate(tok, {"x": ["ab", 3]})
    with pytest.raises(ValueError, match=r"samples\['x'\]: a text is not encodable as UTF-8"):
        evaluate(tok, {"x": ["ab", "a\ud800"]})
    with pytest.raises(FileNotFoundError, match="no/such.txt"):
        evaluate(tok, ["no/such.txt"])
    with pytest.raises(TypeError, match="must be a Tokenizer, a ByteModel"):
        evaluate(bytepair.train_words({"ab": 1}, 1), {"x": ["ab"]})


def test_a_missing_sample_file_names_its_sample_before_any_encoding(tmp_path, monkeypatch):
    tok = bytepair.train(["abab"], merges=2, progress=False)
    (tmp_path / "a.txt").write_text("abab")
    encoded = []
    monkeypatch.setattr(bytepair.Tokenizer, "encode_to_array",
                        lambda self, *args, **kwargs: encoded.append(args))
    with pytest.raises(FileNotFoundError, match=r"^samples\['de'\]: no such file or directory: "):
        evaluate(tok, {"en": tmp_path / "a.txt", "de": tmp_path / "no.txt"})
    with pytest.raises(FileNotFoundError, match=r"^samples\['.*no\*.txt'\]: the pattern .* matches no file"):
        evaluate(tok, [tmp_path / "a.txt", tmp_path / "no*.txt"])
    assert encoded == []


def test_invalid_utf8_sample_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"abc \xff")
    tok = bytepair.train(["abab"], merges=2, progress=False)
    with pytest.raises(ValueError, match=r"bad.txt: invalid UTF-8 at byte offset 4"):
        evaluate(tok, [path])


def test_count_ids_compiled_equals_twin_and_refuses_large_ids():
    ids = array("I", [0, 3, 3, 7, 0, 0])
    assert codec.count_ids(ids, 8) == _encode_py.count_ids(ids, 8) == array(
        "q", [3, 0, 0, 2, 0, 0, 0, 1])
    for count_ids in (codec.count_ids, _encode_py.count_ids):
        with pytest.raises(ValueError, match=r"ids\[3\] = 7 is outside"):
            count_ids(ids, 7)
        with pytest.raises(TypeError, match="unsigned 32-bit"):
            count_ids(array("H", [1]), 4)


@given(st.text(alphabet="a é\t\n\x1c\x85\xa0\u2028\u3000\u200b", max_size=30))
def test_hyp_count_words_equals_split(text):
    assert codec.words_in_text(text) == _encode_py.words_in_text(text) == len(text.split())


def test_gini_and_renyi_edges():
    assert metrics.gini([]) is None and metrics.gini([0, 0]) is None
    assert metrics.renyi_efficiency([0, 0]) is None
    assert metrics.renyi_efficiency([4], vocab_size=10) == 0.0


# -- plots ------------------------------------------------------------------------

def test_plot_is_written_and_opens(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.image import imread
    tok = bytepair.train(KJV, vocab_size=400, per_line=True, progress=False)
    table = evaluate(tok, {"en": MULTILINGUAL.read_text("utf-8").splitlines()[:50]}, step=32)
    path = tmp_path / "curves.png"
    table.plot(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    assert imread(path).shape[0] > 100  # it opens as an image


def test_plot_without_matplotlib_is_one_import_error(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    tok = bytepair.train(["abab"], merges=2, progress=False)
    with pytest.raises(ImportError, match=r"^plot: needs matplotlib: pip install 'bytepair\[plot\]'$"):
        evaluate(tok, {"x": ["ab"]}).plot(tmp_path / "c.png")
    assert not (tmp_path / "c.png").exists()


def test_plot_refuses_unknown_suffix(tmp_path):
    tok = bytepair.train(["abab"], merges=2, progress=False)
    with pytest.raises(ValueError, match=r"must end in one of \.png, \.pdf, \.svg"):
        evaluate(tok, {"x": ["ab"]}).plot(tmp_path / "c.gif")
