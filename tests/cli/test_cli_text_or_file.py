"""Text arguments and file names, run as the real command (``python -m bytepair``).

A command that takes text on the command line (``encode``'s TEXT, ``decode``'s IDS,
``trace``'s DOCs, the ``--special`` tokens and ``--pattern`` regexes) never uses the name of an
existing file or directory as that text: it refuses it in one line that says how to read the
file (``--file PATH``, ``-`` for stdin). The file's contents come in through ``--file`` or stdin.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from bytepair.cli.main import main

TEXT = "hello world, héllo wörld\n"


def real_cli(cwd: Path, *argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """``python -m bytepair ARGV`` in a process of its own."""
    done = subprocess.run([sys.executable, "-m", "bytepair", *argv], cwd=cwd, input=stdin,
                          capture_output=True, timeout=120)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def bytepair_cli(cwd: Path, *argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """The same command's ``main`` in this process (a process each took most of this file's
    time), with ``cwd``, stdin and the output streams swapped in; real_cli checks the entry."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = [io.TextIOWrapper(stream, encoding="utf-8", write_through=True)
               for stream in (io.BytesIO(stdin), out, err)]
    saved = sys.stdin, sys.stdout, sys.stderr, os.getcwd()
    sys.stdin, sys.stdout, sys.stderr = streams
    os.chdir(cwd)
    try:
        try:
            code = main(list(argv))
        except SystemExit as stop:
            code = stop.code
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved[:3]
        os.chdir(saved[3])
        for stream in streams:
            stream.flush()
            stream.detach()  # leaves the buffers open to be read
    return code, out.getvalue().decode(), err.getvalue().decode()


def assert_refused(cwd: Path, argv, *words: str) -> str:
    before = sorted(p.name for p in cwd.iterdir())
    code, out, err = bytepair_cli(cwd, *argv)
    assert (code, out) == (2, ""), err
    assert len(err.splitlines()) == 1 and err.startswith("bytepair: error: "), err
    for word in words:
        assert word in err
    assert sorted(p.name for p in cwd.iterdir()) == before
    return err


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cwd")
    (folder / "small.txt").write_text(TEXT, encoding="utf-8")
    (folder / "12").write_text("3 4\n")
    (folder / "ids.txt").write_text("104 105\n")
    (folder / "docs").mkdir()
    bytepair.train([TEXT * 3], vocab_size=270, pretokenize="gpt2", progress=False).save(
        folder / "model.json")
    return folder


def ids(folder: Path, text: str) -> list[str]:
    return [str(i) for i in bytepair.load(folder / "model.json").encode(text)]


def test_encode_refuses_a_text_that_names_an_existing_file(folder):
    err = assert_refused(folder, ["encode", "model.json", "small.txt"], "TEXT", "'small.txt'",
                         "existing file", "--file small.txt", "'-' reads stdin")
    assert "pipe" in err  # and how to encode the name itself


def test_encode_refuses_a_directory_name(folder):
    assert_refused(folder, ["encode", "model.json", "docs"], "TEXT", "existing directory", "--file")


@pytest.mark.parametrize("argv,stdin", [
    (["--file", "small.txt"], b""),
    (["-"], TEXT.encode()),
    (["--file", "-"], TEXT.encode()),
    ([], TEXT.encode()),
])
def test_encode_reads_the_file_with_file_or_stdin(folder, argv, stdin):
    code, out, err = bytepair_cli(folder, "encode", "model.json", *argv, stdin=stdin)
    assert code == 0, err
    assert out.split() == ids(folder, TEXT)


def test_the_real_command_refuses_a_file_name_and_reads_the_file_with_file(folder):
    code, out, err = real_cli(folder, "encode", "model.json", "small.txt")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "--file small.txt" in err, err
    code, out, err = real_cli(folder, "encode", "model.json", "--file", "small.txt")
    assert code == 0, err
    assert out.split() == ids(folder, TEXT)
    code, out, err = real_cli(folder, "encode", "model.json", stdin=b"small.txt")
    assert code == 0, err
    assert out.split() == ids(folder, "small.txt")


def test_encode_encodes_a_name_given_on_stdin_and_other_text_as_itself(folder):
    assert bytepair_cli(folder, "encode", "model.json", stdin=b"small.txt")[1].split() == \
        ids(folder, "small.txt")
    assert bytepair_cli(folder, "encode", "model.json", "small.text")[1].split() == \
        ids(folder, "small.text")


def test_encode_file_errors_name_the_option(folder):
    assert_refused(folder, ["encode", "model.json", "--file", "absent.txt"], "--file",
                   "No such file", "'absent.txt'")
    assert_refused(folder, ["encode", "model.json", "hi", "--file", "small.txt"], "one text or one --file")


def test_encode_dtype_reads_file_options_like_files(folder, tmp_path):
    out = tmp_path / "a.bin"
    code, _, err = bytepair_cli(folder, "encode", "model.json", "--file", "small.txt", "--dtype",
                                "uint16", "-o", str(out), "-q")
    assert code == 0, err
    code, text, err = bytepair_cli(folder, "decode", "model.json", "--dtype", "uint16",
                                   "--file", str(out))
    assert (code, text) == (0, TEXT), err


def test_decode_refuses_ids_that_name_an_existing_file(folder):
    assert_refused(folder, ["decode", "model.json", "ids.txt"], "IDS", "existing file",
                   "--file ids.txt")
    # Even a name that reads as IDs: the file "12" is in the folder.
    assert_refused(folder, ["decode", "model.json", "12"], "IDS", "'12'", "--file 12")


@pytest.mark.parametrize("argv,stdin", [(["--file", "ids.txt"], b""), (["-"], b"104 105"),
                                        ([], b"104 105"), (["104", "105"], b"")])
def test_decode_reads_ids_from_the_file_or_stdin(folder, argv, stdin):
    code, out, err = bytepair_cli(folder, "decode", "model.json", *argv, stdin=stdin)
    assert (code, out) == (0, "hi"), err


def test_trace_refuses_a_document_that_names_a_file_and_reads_it_with_file(folder):
    assert_refused(folder, ["trace", "small.txt"], "DOC", "existing file", "--file small.txt")
    code, out, err = bytepair_cli(folder, "trace", "--file", "small.txt", "--merges", "1")
    assert code == 0, err
    assert f"STAGE 0 DOC 0 {list(TEXT.encode())}" in out
    code, out, _ = bytepair_cli(folder, "trace", "aab", "--file", "-", stdin=b"ab")
    assert "STAGE 0 DOC 0 [97, 97, 98]" in out and "STAGE 0 DOC 1 [97, 98]" in out


def test_tokens_and_patterns_never_name_existing_files(folder):
    assert_refused(folder, ["train", "small.txt", "--vocab-size", "260", "--special", "small.txt",
                            "-o", "out.json"], "--special", "'small.txt'", "existing file")
    assert_refused(folder, ["train", "small.txt", "--vocab-size", "260", "--pretokenize",
                            "small.txt", "-o", "out.json"], "--pretokenize", "existing file")
    assert_refused(folder, ["encode", "model.json", "--pattern", "small.txt", "hi"], "--pattern",
                   "existing file")
    assert_refused(folder, ["encode", "model.json", "--special", "small.txt", "hi"], "--special",
                   "existing file", ".json")


@pytest.mark.parametrize("pretokenize", ["gpt2", "none"])
def test_a_count_table_given_as_text_points_to_counts(folder, tmp_path, pretokenize):
    """In byte mode the table's bytes would be read as text: refused as well."""
    table = tmp_path / "x.counts"
    code, _, err = bytepair_cli(folder, "count", "small.txt", "-o", str(table), "-q")
    assert code == 0, err
    assert_refused(folder, ["train", str(table), "--pretokenize", pretokenize, "--vocab-size", "260",
                            "-o", "out.json"], "count table", f"--counts {table}")
    assert_refused(folder, ["count", str(table), "-o", "again.counts"], "count table",
                   "train --counts")
    assert_refused(folder, ["learn-words", str(table), "--merges", "2", "-o", "w.json"],
                   "count table")
