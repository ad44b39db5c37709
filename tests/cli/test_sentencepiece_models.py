"""``encode``, ``decode``, ``export`` and ``evaluate`` of a sentencepiece BPE ``.model``:
sentencepiece's own IDs and text, its tokenizer.json, the metrics of other models; options
that cannot apply, and models of other types, refused in one line."""

from __future__ import annotations

import json
import tempfile
from array import array
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

spm = pytest.importorskip("sentencepiece")

import bytepair  # noqa: E402
from bytepair.evaluation.report import evaluate  # noqa: E402
from bytepair.formats.spm_export import tokenizer_json  # noqa: E402
from helpers import assert_bad_input, examples, run  # noqa: E402
from spm_helpers import LLAMA, sample_lines, train_model_file  # noqa: E402

#: Mixed scripts, digits, runs of white space, tabs, NUL, emoji, and characters outside the
#: training text (byte fallback, or the unknown piece).
TEXT = st.text(st.one_of(
    st.sampled_from(list("the and of God said 0123456789    \t\n\x00")),
    st.sampled_from(list("日本語Привет naïve café عربى 😀🎉\u2581\u3000")),
    st.characters(min_codepoint=0x20, max_codepoint=0x2FFF, exclude_categories=("Cs",)),
), max_size=40)


def _train(folder: Path, name: str, multilingual: int = 40, **options) -> str:
    """spm_train's model of some verses and ``multilingual`` multilingual lines, written as
    ``name``.model."""
    return train_model_file(folder, name, 600, multilingual, **options)


@pytest.fixture(scope="module", params=["llama2", "defaults"])
def model(request, tmp_path_factory):
    """(path, SentencePieceProcessor) of a Llama-2-like model with byte fallback, and of one
    with spm's defaults (no byte fallback: the unknown piece)."""
    options = dict(LLAMA) if request.param == "llama2" else {}
    path = _train(tmp_path_factory.mktemp("spm"), "m", model_type="bpe", vocab_size=900, **options)
    return path, spm.SentencePieceProcessor(model_file=path)


def _ids(out: str) -> list[int]:
    return [int(item) for item in out.split()]


def _decode(capsys, path: str, ids: list[int]) -> str:
    """``bytepair decode`` of ``ids`` (given in a file: none on the command line reads stdin)."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "ids.txt"
        source.write_text(" ".join(map(str, ids)), "utf-8")
        code, out, err = run(capsys, "decode", path, "--file", source)
    assert code == 0, err
    return out


@settings(deadline=None, max_examples=examples(100),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_hyp_encode_and_decode_equal_sentencepiece(capsys, model, text):
    path, processor = model
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "text.txt"
        source.write_bytes(text.encode("utf-8"))
        code, out, err = run(capsys, "encode", path, "--file", source)
    assert code == 0, err
    ids = processor.encode(text)
    assert _ids(out) == ids
    assert _decode(capsys, path, ids) == processor.decode(ids)


@settings(deadline=None, max_examples=examples(100),
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.integers(0, 899), max_size=12), prefix=st.lists(
    st.sampled_from(["<0xE2>", "<0x96>", "<0x81>", "<0x20>", "<0xF0>", "\u2581", "<s>", "<unk>"]),
    max_size=6))
def test_hyp_decode_of_any_ids_equals_sentencepiece(capsys, model, ids, prefix):
    """Byte pieces that are not UTF-8, a ``▁`` made of bytes, control pieces first."""
    path, processor = model
    ids = [processor.piece_to_id(piece) for piece in prefix] + ids
    assert _decode(capsys, path, ids) == processor.decode(ids)


def test_arrays_of_lines_with_eos_equal_sentencepiece(capsys, model, tmp_path):
    path, processor = model
    lines = [line.decode() for line in sample_lines("multilingual-sample.txt", 30, start=40)]
    source = tmp_path / "held-out.txt"
    source.write_text("".join(line + "\n" for line in lines), "utf-8")
    output = tmp_path / "ids.bin"
    code, _, err = run(capsys, "encode", path, source, "--dtype", "uint16", "-o", output,
                       "--per-line", "--strip-newlines", "--append", "</s>", "-q")
    assert code == 0, err
    expected = [token for line in lines for token in processor.encode(line) + [processor.eos_id()]]
    assert array("H", output.read_bytes()).tolist() == expected
    code, out, err = run(capsys, "decode", path, "--dtype", "uint16", output)
    assert code == 0, err
    assert out == processor.decode(expected)


def test_vocab_lists_the_pieces_with_their_scores_and_types(capsys, model):
    path, processor = model
    code, out, err = run(capsys, "vocab", path)
    assert code == 0, err
    header, *rows = out.splitlines()
    assert header == "id\tpiece\tscore\ttype" and len(rows) == processor.vocab_size()
    for at, row in enumerate(rows):
        number, piece, score, kind = row.split("\t")
        assert int(number) == at and float(score) == processor.get_score(at)
        if processor.id_to_piece(at).isprintable():
            assert piece == processor.id_to_piece(at)
        assert (kind == "byte") == processor.is_byte(at)
        assert (kind == "control") == processor.is_control(at)


def _export(capsys, path: str, to: str, output: Path) -> str:
    """``bytepair export --to TO``; its summary line."""
    code, _, err = run(capsys, "export", path, "--to", to, "-o", output)
    assert code == 0, err
    return err


def test_export_writes_the_libraries_tokenizer_json(capsys, model, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    path, processor = model
    output = tmp_path / "tokenizer.json"
    _export(capsys, path, "tokenizers", output)
    assert json.loads(output.read_text("utf-8")) == json.loads(
        json.dumps(tokenizer_json(bytepair.load(path)), ensure_ascii=False))
    fast = tokenizers.Tokenizer.from_file(str(output))
    for line in sample_lines("multilingual-sample.txt", 20, start=40):
        text = line.decode()
        assert fast.encode(text, add_special_tokens=False).ids == processor.encode(text), text


def test_export_to_transformers_encodes_as_sentencepiece(capsys, model, tmp_path):
    transformers = pytest.importorskip("transformers")
    path, processor = model
    output = tmp_path / "hf"
    assert "bos '<s>', eos '</s>', unk '<unk>'" in _export(capsys, path, "transformers", output)
    fast = transformers.AutoTokenizer.from_pretrained(str(output))
    assert (fast.bos_token, fast.eos_token, fast.unk_token) == ("<s>", "</s>", "<unk>")
    for line in sample_lines("multilingual-sample.txt", 20, start=40):
        ids = processor.encode(line.decode())
        assert fast.encode(line.decode()) == ids
        if processor.unk_id() not in ids:  # transformers writes the unknown piece as <unk>
            assert fast.decode(ids) == processor.decode(ids)


def test_evaluate_reports_the_metrics_of_sentencepieces_encoding(capsys, model, tmp_path):
    path, processor = model
    lines = [line.decode() for line in sample_lines("multilingual-sample.txt", 30, start=40)]
    sample = tmp_path / "held-out.txt"
    sample.write_text("\n".join(lines), "utf-8")
    code, out, err = run(capsys, "evaluate", path, "--sample", f"{sample}=x", "--per-line",
                         "--json")
    assert code == 0, err
    table = json.loads(out)
    row, = table["rows"]
    tokens = sum(len(processor.encode(line)) for line in lines)
    size = sum(len(line.encode()) for line in lines)
    assert row["tokens"] == tokens and row["vocab_size"] == processor.vocab_size()
    assert row["bytes_per_token"] == size / tokens
    assert row["tokens_per_word"] == tokens / sum(len(line.split()) for line in lines)
    used = {token for line in lines for token in processor.encode(line)}
    producible = [i for i in range(processor.vocab_size()) if not processor.is_control(i)]
    assert row["unused"] == [i for i in producible if i not in used]
    assert table == json.loads(evaluate({path: bytepair.load(path)}, {"x": str(sample)},
                                        per_line=True).to_json())
    code, out, err = run(capsys, "evaluate", path, "--sample", sample)
    assert code == 0, err
    assert "sentencepiece BPE pieces" in out and "bytes/tok" in out


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm-options")
    return _train(folder, "m", model_type="bpe", vocab_size=800, byte_fallback=True)


@pytest.mark.parametrize("argv, words", [
    (["encode", "{m}", "hi", "--pattern", "gpt2"], ["--pattern:", "sentencepiece model"]),
    (["encode", "{m}", "hi", "--special", "<x>"], ["--special:", "sentencepiece model"]),
    (["encode", "{m}", "hi", "--allow-special"], ["--allow-special:", "control pieces"]),
    (["encode", "{m}", "{f}", "--dtype", "uint16", "-o", "{o}", "--threads", "2"],
     ["--threads:", "one thread"]),
    (["encode", "{m}", "{f}", "--dtype", "uint16", "-o", "{o}", "--append", "<end>"],
     ["--append:", "'<end>' is neither a piece", "'<s>'"]),
    (["encode", "{m}", "{f}", "--dtype", "uint16", "-o", "{o}", "--append", "800"],
     ["--append:", "ID 800 is outside"]),
    (["decode", "{m}", "1", "--bytes"], ["--bytes:", "decodes to text"]),
    (["decode", "{m}", "1", "800"], ["IDS:", "800 is outside the vocabulary (0..799)"]),
    (["decode", "{m}", "1", "--pattern", "gpt2"], ["--pattern:", "sentencepiece model"]),
    (["export", "{m}", "--to", "tiktoken", "-o", "{o}"], ["--to tiktoken:", "--to tokenizers"]),
    (["export", "{m}", "--to", "transformers", "-o", "{o}", "--eos", "<end>"],
     ["--eos:", "'<end>' is not a control, unknown or user-defined piece"]),
    (["export", "{m}", "--to", "tokenizers", "-o", "{o}", "--like", "{f}"], ["--like:"]),
    (["export", "{m}", "--to", "tokenizers", "-o", "{o}", "--special", "<x>"], ["--special:"]),
    (["evaluate", "{m}", "--sample", "{f}", "--sizes", "300"], ["--sizes:", "no merge list"]),
    (["evaluate", "{m}", "--sample", "{f}", "--sizes", "all:100"], ["--sizes:", "no merge list"]),
    (["evaluate", "{m}", "--checks"], ["--checks:", "no merge rules"]),
    (["evaluate", "{m}", "--sample", "{f}", "--pattern", "gpt2"], ["--pattern:"]),
])
def test_options_that_cannot_apply_are_refused_in_one_line(capsys, model_path, tmp_path,
                                                            argv, words):
    text = tmp_path / "text.txt"
    text.write_text("some text\n", "utf-8")
    names = {"{m}": model_path, "{f}": str(text), "{o}": str(tmp_path / "out")}
    assert_bad_input(capsys, tmp_path, [names.get(a, a) for a in argv], *words)


@pytest.fixture(scope="module")
def other_types(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm-types")
    return {kind: _train(folder, kind, 0, model_type=kind, vocab_size=70 if kind == "char" else 300)
            for kind in ("unigram", "char", "word")}


@pytest.mark.parametrize("kind", ["unigram", "char", "word"])
@pytest.mark.parametrize("argv", [
    ["encode", "{m}", "hi"], ["encode", "{m}", "{f}", "--dtype", "uint16", "-o", "{o}"],
    ["decode", "{m}", "5"], ["export", "{m}", "--to", "tokenizers", "-o", "{o}"],
    ["evaluate", "{m}", "--sample", "{f}"], ["inspect", "{m}"], ["vocab", "{m}"],
])
def test_other_model_types_are_refused_in_one_line_by_every_command(capsys, other_types,
                                                                     tmp_path, kind, argv):
    text = tmp_path / "text.txt"
    text.write_text("some text\n", "utf-8")
    names = {"{m}": other_types[kind], "{f}": str(text), "{o}": str(tmp_path / "out")}
    assert_bad_input(capsys, tmp_path, [names.get(a, a) for a in argv],
                     f"is a sentencepiece model of type {kind}, which bytepair does not read")
