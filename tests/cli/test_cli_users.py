"""The command line as a new user meets it: training arrays that keep the text, messages that
name the argument, word models, skipped files, and the README's own examples run as written."""

from __future__ import annotations

import builtins
import gzip
import json
import re
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import bytepair
from helpers import KJV, KJV_REST_GZ, assert_bad_input, run

END = "<|endoftext|>"
README = Path(__file__).parents[2] / "README.md"
#: Text with every kind of line end: CRLF, LF, blank lines, a lone CR, no newline at the end.
CRLF_TEXT = ("In the beginning\r\n\r\nGod created\n\n\n  the heaven\r and the earth.\r\n"
             "Привет, мир 🙂\r\nlast line without a newline").encode("utf-8")


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("m") / "tok.json"
    lines = KJV.read_text(encoding="utf-8").splitlines()[:2000]
    bytepair.train(lines, vocab_size=600, special_tokens=[END], workers=1, progress=False).save(path)
    return path


@pytest.fixture(scope="module")
def byte_tokenizer(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("b") / "bytes.json"
    bytepair.train([CRLF_TEXT * 3], vocab_size=300, pretokenize=None, special_tokens=[END],
                   progress=False).save(path)
    return path


def _without(data: bytes, token: str) -> bytes:
    return data.replace(token.encode("utf-8"), b"")


# -- training arrays keep the text ---------------------------------------------

@pytest.mark.parametrize("which", ["tokenizer", "byte_tokenizer"])
@pytest.mark.parametrize("dtype", ["uint16", "uint32"])
def test_per_line_arrays_decode_to_the_corpus_byte_for_byte(capsys, tmp_path, request, which, dtype):
    model = request.getfixturevalue(which)
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(CRLF_TEXT)
    out = tmp_path / "train.bin"
    code, _, err = run(capsys, "encode", model, corpus, "--per-line", "--append", END,
                       "--dtype", dtype, "-o", out)
    assert code == 0, err
    code, data, err = run(capsys, "decode", model, "--dtype", dtype, out, "--bytes")
    assert code == 0, err
    data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    lines = CRLF_TEXT.split(b"\n")
    expected = b"".join(line + b"\n" + END.encode() for line in lines[:-1]) + lines[-1] + END.encode()
    assert data == expected
    assert _without(data, END) == CRLF_TEXT  # the corpus itself, blank lines and CRLF included
    assert data.count(END.encode()) == len(lines)  # one token after each line


def test_stdin_lines_keep_their_newlines_as_files_do(capsys, tmp_path, tokenizer, monkeypatch):
    import io
    import sys

    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(CRLF_TEXT)
    from_file, from_stdin = tmp_path / "file.bin", tmp_path / "stdin.bin"
    assert run(capsys, "encode", tokenizer, corpus, "--per-line", "--append", END, "--dtype",
               "uint16", "-o", from_file)[0] == 0
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CRLF_TEXT)))
    assert run(capsys, "encode", tokenizer, "--per-line", "--append", END, "--dtype", "uint16",
               "-o", from_stdin)[0] == 0
    assert from_stdin.read_bytes() == from_file.read_bytes()


def test_strip_newlines_gives_the_lines_without_their_endings(capsys, tmp_path, tokenizer):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(CRLF_TEXT)
    out = tmp_path / "train.bin"
    assert run(capsys, "encode", tokenizer, corpus, "--per-line", "--append", END, "--dtype",
               "uint16", "-o", out, "--strip-newlines", "-q")[0] == 0
    code, text, _ = run(capsys, "decode", tokenizer, "--dtype", "uint16", out)
    assert code == 0
    assert text.split(END)[:-1] == CRLF_TEXT.decode("utf-8").replace("\r\n", "\n").split("\n")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["a", "ab ", "\u00e9t\u00e9", "\r", "\n", "\r\n", "", " 1"]),
                max_size=20))
def test_arrays_round_trip_any_line_endings(tmp_path_factory, tokenizer, parts):
    import io
    from contextlib import redirect_stderr

    from bytepair.cli.main import main
    from bytepair.formats.tokenfile import read_token_file

    data = "".join(parts).encode("utf-8")
    directory = tmp_path_factory.mktemp("r")
    corpus, out = directory / "c.txt", directory / "t.bin"
    corpus.write_bytes(data)
    with redirect_stderr(io.StringIO()):
        assert main(["encode", str(tokenizer), str(corpus), "--per-line", "--append", END,
                     "--dtype", "uint16", "-o", str(out), "-q"]) == 0
    decoded = bytepair.load(tokenizer).decode_bytes(read_token_file(out, "uint16"))
    assert _without(decoded, END) == data


def test_strip_newlines_needs_per_line(capsys, tmp_path, tokenizer):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(CRLF_TEXT)
    line = assert_bad_input(capsys, tmp_path, ["encode", tokenizer, corpus, "--dtype", "uint16",
                                               "-o", tmp_path / "t.bin", "--strip-newlines"])
    assert line == ("bytepair: error: --strip-newlines: needs --per-line (only lines have "
                    "newlines to strip)")


# -- each message, one line ----------------------------------------------------

def test_a_custom_regex_model_asks_for_trust_pattern(capsys, tmp_path):
    model = tmp_path / "x.json"
    bytepair.train(["ab ab"], merges=1, pretokenize=r"\w+|\W+", progress=False).save(model)
    line = assert_bad_input(capsys, tmp_path, ["encode", model, "hi"])
    assert line == (f"bytepair: error: {str(model)!r} holds a custom regex pattern '\\\\w+|\\\\W+'; "
                    "a regex from a file can take exponential time on some text, so pass "
                    "--trust-pattern if the file comes from a trusted source")
    assert run(capsys, "encode", model, "ab", "--trust-pattern")[0] == 0


def test_a_repeated_special_token_in_a_file_names_the_field(capsys, tmp_path, tokenizer):
    model = tmp_path / "x.json"
    data = json.loads(tokenizer.read_text())
    data["special_tokens"] = [END, END]
    model.write_text(json.dumps(data))
    line = assert_bad_input(capsys, tmp_path, ["encode", model, "hi"])
    assert line == (f"bytepair: error: {str(model)!r} is corrupt: 'special_tokens' must not "
                    f"repeat a token, got {END!r} twice")


@pytest.mark.parametrize("name, pattern, model", [
    ("gpt4", "cl100k", "GPT-4"), ("gpt-4", "cl100k", "GPT-4"), ("gpt4o", "o200k", "GPT-4o"),
    ("GPT-4o", "o200k", "GPT-4o"),
])
def test_model_names_point_at_their_pattern(capsys, tmp_path, name, pattern, model):
    corpus = tmp_path / "a.txt"
    corpus.write_text("text")
    line = assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", "5", "--pretokenize",
                                               name, "-o", tmp_path / "m.json"])
    assert line == (f"bytepair: error: --pretokenize: unknown pattern {name!r}, did you mean "
                    f"{pattern!r} ({model}'s pattern)? (known: cl100k, gpt2, nanochat, none, o200k, "
                    "superbpe, whitespace, whitespace-split; a custom regex is any value with a regex "
                    "character, such as '\\w+|\\W+')")


@pytest.mark.parametrize("argv, expected", [
    (["encode", "nothere.json", "hi"], "MODEL: No such file or directory: 'nothere.json'"),
    (["decode", "nothere.json", "1"], "MODEL: No such file or directory: 'nothere.json'"),
    (["inspect", "nothere.json"], "MODEL: No such file or directory: 'nothere.json'"),
    (["train", "a.txt", "--merges", "5", "--init", "nothere.json", "-o", "m.json"],
     "--init: No such file or directory: 'nothere.json'"),
    (["decode", "TOK", "--dtype", "uint16", "nothere.bin"],
     "FILE: No such file or directory: 'nothere.bin'"),
    (["train", "nothere.txt", "--merges", "5", "-o", "m.json"],
     "FILE: no such file or directory: 'nothere.txt'"),
    (["count", "a.txt", "nothere/", "-o", "a.counts"],
     "FILE: no such file or directory: 'nothere/'"),
    (["encode", "TOK", "nothere*.txt", "--dtype", "uint16", "-o", "a.bin"],
     "FILE: the pattern 'nothere*.txt' matches no file"),
    (["train", "--counts", "nothere.counts", "--vocab-size", "300", "-o", "m.json"],
     "--counts: No such file or directory: 'nothere.counts'"),
    (["inspect", "TOK", "--sample", "nothere.txt"],
     "--sample: no such file or directory: 'nothere.txt'"),
    # The second sample is missing: found before the first is encoded.
    (["evaluate", "TOK", "--sample", "a.txt=en", "--sample", "nothere.txt=de"],
     "--sample: no such file or directory: 'nothere.txt'"),
])
def test_a_missing_file_names_its_argument(capsys, tmp_path, monkeypatch, tokenizer, argv, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("some text")
    argv = [str(tokenizer) if a == "TOK" else a for a in argv]
    assert assert_bad_input(capsys, tmp_path, argv) == f"bytepair: error: {expected}"


def test_a_url_without_fsspec_names_file(capsys, tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_fsspec(name, *args, **kwargs):
        if name == "fsspec" or name.startswith("fsspec."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_fsspec)
    line = assert_bad_input(capsys, tmp_path, ["train", "s3://bucket/a.txt", "--merges", "3",
                                               "-o", tmp_path / "m.json"])
    assert line == "bytepair: error: FILE: reading 's3://bucket/a.txt' needs fsspec: pip install fsspec"


def test_an_empty_corpus_names_its_argument(capsys, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    line = assert_bad_input(capsys, tmp_path, ["train", empty, "--merges", "5", "-o", tmp_path / "m.json"])
    assert line == "bytepair: error: FILE: no text to train on (empty corpus)"
    table = tmp_path / "empty.counts"
    assert run(capsys, "count", empty, "-q", "-o", table)[0] == 0
    line = assert_bad_input(capsys, tmp_path, ["train", "--counts", table, "--merges", "5",
                                               "-o", tmp_path / "m.json"])
    assert line == "bytepair: error: --counts: no text to train on (empty corpus)"


def test_init_larger_than_the_vocabulary_size_names_init(capsys, tmp_path, tokenizer):
    (tmp_path / "a.txt").write_text("some text")
    merges = len(bytepair.load(tokenizer).merges)
    line = assert_bad_input(capsys, tmp_path, ["train", tmp_path / "a.txt", "--vocab-size", "258",
                                               "--init", tokenizer, "-o", tmp_path / "m.json"])
    assert line == (f"bytepair: error: --init: the model already has {merges:,} merges, more than "
                    "the 1 that --vocab-size asks for")


def test_a_count_table_given_as_a_model_says_what_it_is(capsys, tmp_path):
    table = tmp_path / "x.counts"
    bytepair.count(["some text"], progress=False).save(table)
    line = assert_bad_input(capsys, tmp_path, ["encode", table, "hi"])
    assert line == (f"bytepair: error: {str(table)!r} is a piece-count table, not a model: train "
                    "a model from it with 'bytepair train --counts'")


def test_init_with_another_pattern_names_both(capsys, tmp_path):
    corpus = tmp_path / "a.txt"
    corpus.write_text("low lower lowest\n" * 5)
    init = tmp_path / "init.json"
    assert run(capsys, "train", corpus, "--merges", "3", "-q", "-o", init)[0] == 0
    line = assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", "6", "--init", init,
                                               "--pretokenize", "whitespace", "-o", tmp_path / "m.json"])
    assert line == ("bytepair: error: --init was trained with a different pretokenize pattern: "
                    "gpt2, where --pretokenize names whitespace")


def test_count_tables_train_with_their_pattern_and_a_conflict_names_both(capsys, tmp_path):
    corpus = tmp_path / "a.txt"
    corpus.write_text("low lower lowest 123\n" * 5)
    table = tmp_path / "a.counts"
    assert run(capsys, "count", corpus, "--pretokenize", "whitespace", "-q", "-o", table)[0] == 0
    model = tmp_path / "m.json"
    assert run(capsys, "train", "--counts", table, "--merges", "4", "-q", "-o", model)[0] == 0
    assert bytepair.load(model).pattern == bytepair.PieceCounts.load(table).pattern
    line = assert_bad_input(capsys, tmp_path, ["train", "--counts", table, "--merges", "4",
                                               "--pretokenize", "o200k", "-o", tmp_path / "n.json"])
    assert line == "bytepair: error: --pretokenize: the counts were cut with whitespace, not o200k"


def test_summaries_write_numbers_one_way(capsys, tmp_path, tokenizer):
    corpus = tmp_path / "one.txt"
    corpus.write_text(KJV.read_text(encoding="utf-8")[:60_000])
    code, _, err = run(capsys, "count", corpus, "-o", tmp_path / "a.counts")
    assert code == 0
    match = re.fullmatch(r"bytepair: wrote '.*': ([\d,]+) distinct pieces, ([\d,]+) in all, "
                         r"pattern gpt2 \(\d+\.\d s\)\n", err)
    assert match and all("," in n for n in match.groups()), err
    code, _, err = run(capsys, "encode", tokenizer, corpus, "--dtype", "uint16", "-o", tmp_path / "t.bin")
    assert code == 0
    assert re.fullmatch(r"bytepair: wrote '.*': [\d,]+ tokens \(uint16\) from 1 document, "
                        r"[\d,]+ characters, \d+\.\d{3} characters per token \(\d+\.\d s\)\n", err), err
    assert "60,000 characters" in err


# -- --skip-unreadable ---------------------------------------------------------

@pytest.mark.parametrize("command", ["train", "count"])
def test_skip_unreadable_leaves_out_binary_files_and_says_which(capsys, tmp_path, command):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("low lower lowest\n" * 20)
    (docs / "b.txt.gz").write_bytes(gzip.compress(b"new newer newest\n" * 20))
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    (docs / "old.txt").write_bytes("caf\u00e9 \u00e0 la carte\n".encode("latin-1"))
    out = tmp_path / ("m.json" if command == "train" else "m.counts")
    size = ["--merges", "10"] if command == "train" else []
    # Without the option the first bad file to be read stops the run (workers race for it).
    line = assert_bad_input(capsys, tmp_path, [command, docs, *size, "-o", out], "invalid UTF-8")
    assert ("logo.png" in line or "old.txt" in line)
    assert line.endswith("; --skip-unreadable leaves out such files")
    code, _, err = run(capsys, command, docs, *size, "--skip-unreadable", "-o", out)
    assert code == 0, err
    first = err.splitlines()[0]
    assert first == (f"bytepair: skipped 2 files that are not UTF-8 text: {str(docs / 'logo.png')!r} "
                     f"(invalid UTF-8 at byte offset 0), {str(docs / 'old.txt')!r} "
                     f"(invalid UTF-8 at byte offset 3)")
    readable = tmp_path / ("r.json" if command == "train" else "r.counts")
    assert run(capsys, command, docs / "a.txt", docs / "b.txt.gz", *size, "-q", "-o", readable)[0] == 0
    if command == "train":
        assert bytepair.load(out) == bytepair.load(readable)
    else:
        assert bytepair.PieceCounts.load(out) == bytepair.PieceCounts.load(readable)


def test_skip_unreadable_with_counts_is_refused(capsys, tmp_path):
    table = tmp_path / "a.counts"
    bytepair.count(["text"], progress=False).save(table)
    line = assert_bad_input(capsys, tmp_path, ["train", "--counts", table, "--merges", "2",
                                               "--skip-unreadable", "-o", tmp_path / "m.json"])
    assert line == ("bytepair: error: --skip-unreadable: has no effect with --counts (the counts "
                    "are already made)")


# -- word models ---------------------------------------------------------------

@pytest.fixture
def word_model(tmp_path) -> Path:
    path = tmp_path / "words.json"
    bytepair.train_words({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 6,
                         end_of_word="</w>").save(path)
    return path


def test_word_models_inspect_vocab_and_encode(capsys, tmp_path, word_model):
    model = bytepair.load(word_model)
    code, out, err = run(capsys, "inspect", word_model, "--top", "2")
    assert (code, err) == (0, "")
    assert out.splitlines()[1:4] == ["kind: word mode (string symbols; no token IDs)", "rules: 6",
                                     "end of word: '</w>'"]
    code, out, _ = run(capsys, "vocab", word_model)
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows[0] == ["rank", "left", "right", "symbol"]
    assert rows[1:] == [[str(m.rank), m.left, m.right, m.token_id] for m in model.merges]
    code, out, _ = run(capsys, "encode", word_model, "lowest newer")
    assert code == 0
    assert out.splitlines() == [" ".join(model.encode("lowest")), " ".join(model.encode("newer"))]


def test_word_models_explain_what_they_cannot_do(capsys, tmp_path, word_model):
    line = assert_bad_input(capsys, tmp_path, ["decode", word_model, "1", "2"])
    assert line == (f"bytepair: error: {str(word_model)!r} is a word-mode model, which has no token "
                    "IDs to decode: 'bytepair encode' prints its symbols, 'inspect' and 'vocab' "
                    "list its rules")


# -- the README, run as written --------------------------------------------------

def _readme_commands(*starts: str) -> list[list[str]]:
    """The README's command lines (also those quoted in a comment) that begin as given."""
    found = []
    for line in README.read_text(encoding="utf-8").splitlines():
        text = line.strip().lstrip("#").strip().strip("():")
        if text.startswith(starts):
            found.append(shlex.split(text.split("  #")[0]))
    return found


@pytest.mark.slow  # three fits of 4.4 MB to 16,384 tokens: 3 s compiled, 25 s on the Python twin
def test_readme_init_example_equals_training_from_scratch(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    # The whole KJV (4.4 MB): enough pairs that training goes on past 8192 and stops at 16384.
    (corpus / "a.txt").write_bytes(KJV.read_bytes())
    (corpus / "b.txt.gz").write_bytes(KJV_REST_GZ.read_bytes())
    commands = _readme_commands("bytepair train corpus/ --vocab-size 8192 --special",
                                "bytepair train corpus/ --vocab-size 16384")
    scratch = [c for c in commands if "--init" not in c and "16384" in c]
    small = [c for c in commands if "8192" in c]
    warm = [c for c in commands if "--init" in c]
    assert len(scratch) == len(small) == len(warm) == 1, commands
    for command in (small[0], warm[0]):
        code, _, err = run(capsys, *command[1:], "-q")
        assert code == 0, err
    warm_file = tmp_path / warm[0][warm[0].index("-o") + 1]
    warm_bytes = warm_file.read_bytes()
    warm_file.unlink()
    code, _, err = run(capsys, *scratch[0][1:], "-q")
    assert code == 0, err
    assert warm_file.read_bytes() == warm_bytes
    assert len(bytepair.load(tmp_path / "model8k.json").merges) == 8192 - 257
    assert len(bytepair.load(warm_file).merges) > 8192 - 257
