"""``bytepair encode --dtype`` and ``bytepair decode --dtype``: binary token arrays.

The array must hold exactly the IDs the library gives, documents one after
the other; bad input ends with one error line, exit code 2 and no file.
"""

from __future__ import annotations

import json
import re
from array import array
from pathlib import Path

import pyarrow
import pyarrow.parquet as parquet
import pytest

import bytepair
import bytepair.model.lines
from bytepair.split.pretokenize import PATTERNS
from helpers import assert_bad_input, run

END = "<|endoftext|>"



def read_ids(path: Path, typecode: str) -> list[int]:
    ids = array(typecode)
    ids.frombytes(path.read_bytes())
    return ids.tolist()


@pytest.fixture(scope="module")
def lines(real_text) -> list[str]:
    text = real_text.decode("utf-8")
    return text.splitlines()[:3000] + ["Привет, мир!  你好 🙂", "", "trailing   "]


@pytest.fixture(scope="module")
def model(tmp_path_factory, lines) -> Path:
    directory = tmp_path_factory.mktemp("model")
    path = directory / "model.json"
    bytepair.train(lines, vocab_size=1000, special_tokens=[END], progress=False).save(path)
    return path


@pytest.fixture
def corpus(tmp_path, lines) -> Path:
    path = tmp_path / "docs.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("strip", [False, True])
@pytest.mark.parametrize("dtype,typecode", [("uint16", "H"), ("uint32", "I")])
def test_binary_output_equals_the_python_ids(capsys, tmp_path, model, corpus, lines, dtype, typecode,
                                             strip):
    out = tmp_path / "train.bin"
    code, stdout, err = run(capsys, "encode", model, corpus, "--per-line", "--dtype", dtype,
                            "--append", END, "-o", out, *(["--strip-newlines"] if strip else []))
    assert code == 0, err
    tok = bytepair.load(model)
    # Each line keeps its newline unless --strip-newlines.
    documents = lines if strip else [line + "\n" for line in lines]
    expected = [i for line in documents for i in tok.encode(line) + [tok.special_tokens[END]]]
    assert read_ids(out, typecode) == expected
    assert stdout == ""
    assert f"{len(expected):,} tokens" in err and "per token" in err
    # And back: decode reads the array.
    code, text, err = run(capsys, "decode", model, "--dtype", dtype, out)
    assert code == 0, err
    assert text == "".join(line + END for line in documents)


def test_jsonl_documents_and_an_append_id(capsys, tmp_path, model, lines):
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"body": line}) + "\n" for line in lines[:200]))
    out = tmp_path / "out.bin"
    code, _, err = run(capsys, "encode", model, path, "--jsonl-field", "body", "--dtype", "uint16",
                       "--append", "0", "-o", out, "--threads", "2")
    assert code == 0, err
    tok = bytepair.load(model)
    assert read_ids(out, "H") == [i for line in lines[:200] for i in tok.encode(line) + [0]]


def test_whole_files_are_documents_and_output_replaces_the_target(capsys, tmp_path, model, lines):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("\n".join(lines[:50]))
    second.write_text("\n".join(lines[50:80]))
    out = tmp_path / "out.bin"
    out.write_bytes(b"old")
    code, _, err = run(capsys, "encode", model, first, second, "--dtype", "uint32", "-o", out, "-q")
    assert code == 0 and err == ""
    tok = bytepair.load(model)
    assert read_ids(out, "I") == tok.encode("\n".join(lines[:50])) + tok.encode("\n".join(lines[50:80]))


def test_special_token_text_in_files_is_refused_unless_allowed(capsys, tmp_path, model):
    path = tmp_path / "docs.txt"
    path.write_text(f"one{END}two\n")
    out = tmp_path / "out.bin"
    assert_bad_input(capsys, tmp_path, ["encode", model, path, "--dtype", "uint16", "-o", out],
                     "special token")
    tok = bytepair.load(model)
    assert run(capsys, "encode", model, path, "--dtype", "uint16", "-o", out, "--allow-special")[0] == 0
    assert read_ids(out, "H") == tok.encode(f"one{END}two\n", allowed_special="all")
    assert run(capsys, "encode", model, path, "--dtype", "uint16", "-o", out, "--ordinary")[0] == 0
    assert read_ids(out, "H") == tok.encode_ordinary(f"one{END}two\n")


def test_unknown_append_token(capsys, tmp_path, model, corpus):
    out = tmp_path / "out.bin"
    assert_bad_input(capsys, tmp_path, ["encode", model, corpus, "--dtype", "uint16", "--append",
                                        "<|eot|>", "-o", out], "--append", "<|eot|>", END)
    assert_bad_input(capsys, tmp_path, ["encode", model, corpus, "--dtype", "uint16", "--append",
                                        "1000", "-o", out], "--append", "1000", "outside")


@pytest.mark.slow  # a 65k-rule model
def test_vocabulary_too_large_for_uint16(capsys, tmp_path, corpus):
    # A chain of rules: 256 + 65,300 tokens do not fit in 16 bits.
    rows = [[97, 97, 1, 1]] + [[255 + k, 97, 1, 1] for k in range(1, 65_300)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"format": "bytepair-model", "version": 1, "kind": "bytes",
                                "pattern": PATTERNS["gpt2"], "merges": rows}))
    out = tmp_path / "out.bin"
    assert_bad_input(capsys, tmp_path, ["encode", path, corpus, "--dtype", "uint16", "-o", out],
                     "uint16", "65556", "uint32")
    assert run(capsys, "encode", path, corpus, "--dtype", "uint32", "-o", out, "-q")[0] == 0


def test_decode_refuses_ids_outside_the_vocabulary(capsys, tmp_path, model):
    path = tmp_path / "bad.bin"
    path.write_bytes(array("H", [97, 98, 60000]).tobytes())
    assert_bad_input(capsys, tmp_path, ["decode", model, "--dtype", "uint16", path],
                     "bad.bin", "ids[2] = 60000", "outside the vocabulary")


def test_decode_refuses_a_partial_id(capsys, tmp_path, model):
    path = tmp_path / "odd.bin"
    path.write_bytes(b"\x61\x00\x62")
    assert_bad_input(capsys, tmp_path, ["decode", model, "--dtype", "uint16", path],
                     "odd.bin", "3 bytes", "uint16")
    path.write_bytes(b"\x61\x00\x00\x00\x62\x00")
    assert_bad_input(capsys, tmp_path, ["decode", model, "--dtype", "uint32", path], "6 bytes")


def test_file_options_need_dtype(capsys, tmp_path, model, corpus):
    assert_bad_input(capsys, tmp_path, ["encode", model, corpus, "-o", tmp_path / "x.bin"],
                     "--output", "--dtype")
    assert_bad_input(capsys, tmp_path, ["encode", model, corpus, "--dtype", "uint16"],
                     "-o/--output")


def test_a_bad_document_leaves_no_file(capsys, tmp_path, model, corpus):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe not text\n")
    out = tmp_path / "out.bin"
    assert_bad_input(capsys, tmp_path, ["encode", model, corpus, bad, "--per-line", "--dtype",
                                        "uint16", "-o", out], "bad.txt", "UTF-8")


def test_parquet_column_documents(capsys, tmp_path, model, lines):
    path = tmp_path / "docs.parquet"
    parquet.write_table(pyarrow.table({"body": lines[:300], "n": list(range(300))}), path,
                        row_group_size=100)
    out = tmp_path / "out.bin"
    code, _, err = run(capsys, "encode", model, path, "--text-column", "body", "--dtype", "uint16",
                       "--append", END, "-o", out)
    assert code == 0, err
    tok = bytepair.load(model)
    end = tok.special_tokens[END]
    assert read_ids(out, "H") == [i for line in lines[:300] for i in tok.encode(line) + [end]]


def test_output_through_a_symlink_replaces_the_target(capsys, tmp_path, model, corpus):
    target = tmp_path / "real.bin"
    target.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    assert run(capsys, "encode", model, corpus, "--dtype", "uint32", "-o", link, "-q")[0] == 0
    assert link.is_symlink()
    assert read_ids(target, "I") == bytepair.load(model).encode(corpus.read_text())


@pytest.mark.parametrize("threads", ["1", "2", "3"])
@pytest.mark.parametrize("strip", [False, True])
def test_per_line_blocks_on_threads_equal_the_python_ids(capsys, monkeypatch, tmp_path, model,
                                                         threads, strip):
    # Small blocks: many of them, encoded on several threads, written in order; CRLF,
    # a lone CR, empty lines, multi-byte UTF-8, a last line without a newline, and a
    # block holding special-token text (read as text lines, allowed here).
    # The command imports these when it runs: patched where they live.
    from bytepair.formats import tokenfile

    monkeypatch.setattr(tokenfile, "LINE_BLOCK_BYTES", 64)
    encoded = []  # the blocks encoded from their bytes (not read as text lines)
    encode_lines = bytepair.model.lines.encode_lines
    monkeypatch.setattr(bytepair.model.lines, "encode_lines", lambda *a, **k: encoded.append(
        encode_lines(*a, **k)) or encoded[-1])
    documents = ["aaaa aaaa\r\n", "\n", "Привет 🙂 мир\n", f"one{END}two\n", "x\ry\r\n",
                 "    \n", "ab" * 50 + "\n", "tail"] * 7
    path = tmp_path / "docs.txt"
    path.write_bytes("".join(documents).encode("utf-8"))
    out = tmp_path / "out.bin"
    code, _, err = run(capsys, "encode", model, path, "--per-line", "--dtype", "uint32",
                       "--append", END, "-o", out, "--allow-special", "--threads", threads,
                       *(["--strip-newlines"] if strip else []))
    assert code == 0, err
    tok = bytepair.load(model)
    lines = re.findall(r"[^\n]*\n|[^\n]+", "".join(documents))  # cut after each \n only
    if strip:
        lines = [line.removesuffix("\n").removesuffix("\r") if line.endswith("\n") else line
                 for line in lines]
    expected = [i for line in lines
                for i in tok.encode(line, allowed_special="all") + [tok.special_tokens[END]]]
    assert read_ids(out, "I") == expected
    assert f"from {len(lines):,} documents, {sum(map(len, lines)):,} characters" in err
    assert sum(block is not None for block in encoded) >= 5 and None in encoded


def test_per_line_blocks_name_the_offset_of_bad_utf8(capsys, monkeypatch, tmp_path, model):
    from bytepair.formats import tokenfile

    monkeypatch.setattr(tokenfile, "LINE_BLOCK_BYTES", 16)
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line\n" * 10 + b"ok \xff\n")
    out = tmp_path / "out.bin"
    assert_bad_input(capsys, tmp_path, ["encode", model, path, "--per-line", "--dtype",
                                        "uint16", "-o", out, "--threads", "2"],
                     "bad.txt", "invalid UTF-8 at byte offset 103")


def test_per_line_blocks_refuse_special_token_text(capsys, tmp_path, model):
    path = tmp_path / "docs.txt"
    path.write_text("fine\n" * 1000 + f"one{END}two\n")
    out = tmp_path / "out.bin"
    assert_bad_input(capsys, tmp_path, ["encode", model, path, "--per-line", "--dtype", "uint16",
                                        "-o", out, "--threads", "2"], "special token")
