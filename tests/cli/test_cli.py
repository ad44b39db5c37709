"""The command line: every subcommand, the course trace, and every kind of bad input.

Most tests call ``bytepair.cli.main.main([...])`` in process (capsys); a few run
``python -m bytepair`` as a subprocess to check the real entry point, pipes
and exit codes.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
import bytepair.training
from bytepair.formats import export
from bytepair.cli.main import main
from bytepair.teach.trace import trace_lines
from bytepair.learn.naive import fit
from helpers import assert_bad_input, byte_token, listing, run, spy_on_workers

END = "<|endoftext|>"

#: The chapter's two-round trace of the documents "aaa" and "aba".
CHAPTER_TRACE = """\
TRACE bpe-merges-v1 BEGIN
STAGE 0 DOC 0 [97, 97, 97]
STAGE 0 DOC 1 [97, 98, 97]
CANDIDATE rank=0 left=97 right=97 count=2 winner=yes
CANDIDATE rank=0 left=97 right=98 count=1 winner=no
CANDIDATE rank=0 left=98 right=97 count=1 winner=no
MERGE rank=0 left=97 right=97 count=2 replacements=1 token=256 bytes_hex=6161
STAGE 1 DOC 0 [256, 97]
STAGE 1 DOC 1 [97, 98, 97]
CANDIDATE rank=1 left=97 right=98 count=1 winner=yes
CANDIDATE rank=1 left=98 right=97 count=1 winner=no
CANDIDATE rank=1 left=256 right=97 count=1 winner=no
MERGE rank=1 left=97 right=98 count=1 replacements=1 token=257 bytes_hex=6162
STAGE 2 DOC 0 [256, 97]
STAGE 2 DOC 1 [257, 97]
TRACE bpe-merges-v1 END
"""

#: Held-out text: not in the training slice, several scripts, long whitespace runs.
MULTILINGUAL = (
    "Привет, мир! Съешь же ещё этих мягких французских булок.\n"
    "你好，世界。東京は晴れ。\t\t\n"
    "emoji 🙂🙃👍🏽 and     long      runs\n\n\n   of spaces   "
)



@pytest.fixture(scope="module")
def texts(real_text) -> tuple[str, str]:
    """A training slice of the KJV (about 100 KB) and held-out text."""
    text = real_text.decode("utf-8")
    cut = text.index("\n", 100_000) + 1
    return text[:cut], text[-3000:] + MULTILINGUAL


@pytest.fixture
def corpus(tmp_path, texts) -> Path:
    path = tmp_path / "train.txt"
    path.write_text(texts[0], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory, texts) -> Path:
    """A tokenizer trained through the CLI: gpt2 pattern, 600 IDs, one special token."""
    directory = tmp_path_factory.mktemp("trained")
    corpus = directory / "train.txt"
    corpus.write_text(texts[0], encoding="utf-8")
    model = directory / "model.json"
    assert main(["train", str(corpus), "--vocab-size", "600", "--special", END,
                 "--workers", "1", "--quiet", "-o", str(model)]) == 0
    return model


# -- train ------------------------------------------------------------------

def test_train_writes_the_model_the_api_trains(tmp_path, capsys, corpus):
    model = tmp_path / "m.json"
    code, out, err = run(capsys, "train", corpus, "--vocab-size", 600, "--special", END,
                         "--workers", 1, "-o", model)
    assert code == 0
    assert out == ""
    assert "vocabulary 600 = 256 bytes + 343 merges + 1 special token " in err
    expected = bytepair.train(corpus, vocab_size=600, special_tokens=[END], workers=1,
                              progress=False)
    assert bytepair.load(model) == expected
    assert expected.pattern == bytepair.split.pretokenize.PATTERNS["gpt2"]  # the default


def test_train_quiet_prints_nothing(tmp_path, capsys, corpus):
    code, out, err = run(capsys, "train", corpus, "--merges", 50, "--quiet", "-o", tmp_path / "m.json")
    assert (code, out, err) == (0, "", "")


def test_train_reports_an_early_stop(tmp_path, capsys):
    (tmp_path / "tiny.txt").write_text("abab")
    code, _, err = run(capsys, "train", tmp_path / "tiny.txt", "--merges", 10, "--pretokenize", "none",
                       "--min-frequency", 2, "-o", tmp_path / "m.json")
    assert code == 0
    assert "stopped after 1 of 10 merges: no pair left that is seen at least 2 times" in err
    assert [m[:4] for m in bytepair.load(tmp_path / "m.json").merges] == [(0, 97, 98, 256)]
    # Singular forms: one merge, one time, no special token.
    code, _, err = run(capsys, "train", tmp_path / "tiny.txt", "--merges", 1, "--pretokenize", "none",
                       "-o", tmp_path / "one.json")
    assert code == 0 and "= 256 bytes + 1 merge + 0 special tokens (" in err
    (tmp_path / "ab.txt").write_text("ab")
    code, _, err = run(capsys, "train", tmp_path / "ab.txt", "--merges", 2, "--pretokenize", "none",
                       "-o", tmp_path / "two.json")
    assert "stopped after 1 of 2 merges: no pair left that is seen at least 1 time\n" in err


def test_workers_give_identical_model_files(tmp_path, capsys, corpus, monkeypatch):
    for workers in (1, 2):
        if workers == 2:
            spy = spy_on_workers(monkeypatch, part_bytes=4096)
        code, _, err = run(capsys, "train", corpus, "--per-line", "--vocab-size", 700,
                           "--workers", workers, "-q", "-o", tmp_path / f"w{workers}.json")
        assert code == 0, err
    assert spy.shared_by(2)
    assert (tmp_path / "w1.json").read_bytes() == (tmp_path / "w2.json").read_bytes()


@pytest.mark.parametrize("pattern", ["gpt2", "none"])
def test_init_warm_start_equals_training_from_scratch(tmp_path, capsys, corpus, pattern):
    small, warm, scratch = (tmp_path / f"{n}.json" for n in ("small", "warm", "scratch"))
    common = ["--pretokenize", pattern, "--workers", 1, "-q"]
    assert run(capsys, "train", corpus, "--vocab-size", 400, "--special", END, *common, "-o", small)[0] == 0
    # Pattern and special tokens default to the init model's.
    assert run(capsys, "train", corpus, "--vocab-size", 700, "--init", small, "-q", "-o", warm)[0] == 0
    assert run(capsys, "train", corpus, "--vocab-size", 700, "--special", END, *common, "-o", scratch)[0] == 0
    assert warm.read_bytes() == scratch.read_bytes()
    assert len(bytepair.load(warm).merges) == 700 - 257


def test_init_with_another_pattern_is_refused(tmp_path, capsys, corpus):
    small = tmp_path / "small.json"
    assert run(capsys, "train", corpus, "--merges", 20, "-q", "-o", small)[0] == 0
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 40, "--init", small,
                                        "--pretokenize", "whitespace", "-o", tmp_path / "x.json"],
                     "different pretokenize pattern")


def test_per_line_input_equals_the_api_on_the_lines(tmp_path, capsys, texts):
    lines = texts[0].splitlines()[:400]
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = tmp_path / "m.json"
    assert run(capsys, "train", path, "--per-line", "--pretokenize", "none", "--merges", 150,
               "-q", "-o", model)[0] == 0
    expected = bytepair.train(lines, merges=150, pretokenize=None, progress=False)
    assert bytepair.load(model) == expected
    whole = tmp_path / "whole.json"
    assert run(capsys, "train", path, "--pretokenize", "none", "--merges", 150, "-q", "-o", whole)[0] == 0
    assert bytepair.load(whole) != expected  # line ends are barriers only with --per-line


@pytest.mark.parametrize("name", ["records.jsonl", "records.jsonl.gz", "records.ndjson"])
def test_jsonl_input_equals_the_api_on_the_field(tmp_path, capsys, texts, name):
    lines = texts[0].splitlines()[:400]
    data = "".join(json.dumps({"id": i, "body": line}) + "\n" for i, line in enumerate(lines))
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(data)
    else:
        path.write_text(data, encoding="utf-8")
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "train", path, "--jsonl-field", "body", "--merges", 150, "-q", "-o", model)
    assert code == 0, err
    assert bytepair.load(model) == bytepair.train(lines, merges=150, progress=False)


def test_gzip_and_directory_inputs(tmp_path, capsys, texts):
    first, second = texts[0][:50_000], texts[0][50_000:]
    (tmp_path / "in" / "sub").mkdir(parents=True)
    (tmp_path / "in" / "a.txt").write_text(first, encoding="utf-8")
    with gzip.open(tmp_path / "in" / "sub" / "b.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(second)
    model = tmp_path / "m.json"
    assert run(capsys, "train", tmp_path / "in", "--merges", 200, "-q", "-o", model)[0] == 0
    assert bytepair.load(model) == bytepair.train([first, second], merges=200, progress=False)


def test_byte_mode_reads_invalid_utf8_as_it_is(tmp_path, capsys):
    (tmp_path / "raw.bin").write_bytes(b"\xff\xfe\xff\xfe abc \xff\xfe")
    model = tmp_path / "m.json"
    assert run(capsys, "train", tmp_path / "raw.bin", "--pretokenize", "none", "--merges", 1,
               "-q", "-o", model)[0] == 0
    assert bytepair.load(model).merges[0][1:3] == (255, 254)


def test_progress_bars_only_on_a_terminal_without_quiet(tmp_path, capsys, corpus, monkeypatch):
    seen = []
    real_train = bytepair.train

    def spy(corpus, **options):
        seen.append(options["progress"])
        return real_train(corpus, **{**options, "progress": False})

    monkeypatch.setattr(bytepair.training, "train", spy)  # run_train imports it when it runs
    argv = ["train", corpus, "--merges", 5, "-o", tmp_path / "m.json"]
    run(capsys, *argv)  # captured stderr is not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    run(capsys, *argv)
    run(capsys, *argv, "--quiet")
    assert seen == [False, True, False]


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_bars_appear_on_a_real_terminal(tmp_path, corpus):
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    # A fresh pseudo-terminal is 0 columns wide, and tqdm draws nothing in it.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "bytepair", "train", str(corpus), "--merges", "50",
             "--workers", "1", "-o", str(tmp_path / "m.json")],
            stderr=slave, stdout=subprocess.PIPE, timeout=120,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal has no writer left
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    shown = b"".join(chunks).decode("utf-8", "replace")
    assert result.returncode == 0
    assert "reading" in shown and "merging" in shown


# -- encode / decode --------------------------------------------------------

def test_encode_decode_round_trip_on_held_out_text(capsys, trained, texts):
    held_out = texts[1]
    tokenizer = bytepair.load(trained)
    code, out, _ = run(capsys, "encode", trained, held_out)
    assert code == 0 and out.endswith("\n") and out.count("\n") == 1
    ids = [int(i) for i in out.split()]
    assert ids == tokenizer.encode(held_out)
    assert len(ids) < len(held_out.encode("utf-8")) / 2  # real compression on English
    code, out, _ = run(capsys, "decode", trained, *map(str, ids))
    assert (code, out) == (0, held_out)  # exact: nothing added off a terminal


def test_encode_reads_stdin_and_decode_reads_ids_from_stdin(capsys, trained, texts, monkeypatch):
    held_out = texts[1]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(held_out.encode("utf-8"))))
    code, out, _ = run(capsys, "encode", trained)
    assert code == 0
    ids = out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ids.encode("ascii"))))
    assert run(capsys, "decode", trained) == (0, held_out, "")
    assert run(capsys, "decode", trained, ids.strip()) == (0, held_out, "")  # one quoted argument


def test_encode_special_tokens(capsys, trained):
    special_id = bytepair.load(trained).special_tokens[END]
    text = f"In the beginning{END}"
    code, out, _ = run(capsys, "encode", trained, text, "--allow-special")
    assert code == 0 and int(out.split()[-1]) == special_id
    code, out, _ = run(capsys, "encode", trained, text, "--ordinary")
    assert code == 0 and str(special_id) not in out.split()
    line = assert_bad_input(capsys, trained.parent, ["encode", trained, text], END, "--allow-special")
    assert "TEXT" in line


def test_decode_invalid_utf8_replaces_or_writes_raw_bytes(capsysbinary, trained):
    tokenizer = bytepair.load(trained)
    ids = tokenizer.encode("é")  # two bytes: decode only the first
    first = [t for t in range(256) if tokenizer.token_bytes(t) == "é".encode()[:1]]
    assert main(["decode", str(trained), *map(str, [*first, 65])]) == 0
    assert capsysbinary.readouterr().out == "\ufffdA".encode("utf-8")
    assert main(["decode", str(trained), "--bytes", *map(str, [*first, 65])]) == 0
    assert capsysbinary.readouterr().out == b"\xc3A"
    assert main(["decode", str(trained), "--bytes", *map(str, ids)]) == 0
    assert capsysbinary.readouterr().out == "é".encode()


def test_encode_byte_mode_model_takes_any_bytes(tmp_path, capsys, corpus):
    model = tmp_path / "bytes.json"
    bytepair.train_bytes([corpus.read_bytes()], 100).save(model)  # a plain ByteModel file
    code, out, _ = run(capsys, "encode", model, "the \udcff end")  # argv byte 0xff
    assert code == 0
    ids = [int(i) for i in out.split()]
    assert bytepair.load(model).decode(ids) == b"the \xff end"


def test_decode_bad_ids(capsys, trained):
    assert_bad_input(capsys, trained.parent, ["decode", trained, "12", "x1"], "'x1'", "not a token ID")
    assert_bad_input(capsys, trained.parent, ["decode", trained, "600"], "600", "outside the vocabulary")
    assert_bad_input(capsys, trained.parent, ["decode", trained, "--", "-1"], "-1", "outside")


# -- export -----------------------------------------------------------------

@pytest.mark.parametrize("target, method", [("tokenizers", "to_tokenizers_json"),
                                            ("tiktoken", "to_tiktoken")])
def test_export_writes_what_the_api_writes(tmp_path, capsys, trained, target, method):
    output = tmp_path / f"out.{target}"
    code, out, err = run(capsys, "export", trained, "--to", target, "-o", output)
    assert (code, out) == (0, "")
    assert err.startswith(f"bytepair: wrote {str(output)!r}: ") and "600 tokens (1 special token)" in err
    assert run(capsys, "export", trained, "--to", target, "-q", "-o", output) == (0, "", "")
    getattr(export, method)(bytepair.load(trained), tmp_path / "api")
    assert output.read_bytes() == (tmp_path / "api").read_bytes()


def test_export_checks_the_output_directory_first(tmp_path, capsys, trained):
    assert_bad_input(capsys, tmp_path, ["export", trained, "--to", "tiktoken",
                                        "-o", tmp_path / "missing" / "x.tiktoken"],
                     "'", "missing", "does not exist")


# -- inspect ----------------------------------------------------------------

def test_inspect(tmp_path, capsys, trained, texts):
    sample = tmp_path / "sample.txt"
    sample.write_text(texts[1], encoding="utf-8")
    tokenizer = bytepair.load(trained)
    code, out, _ = run(capsys, "inspect", trained, "--sample", sample, "--top", 3)
    assert code == 0
    lines = out.splitlines()
    assert "vocabulary size: 600 = 256 bytes + 343 merges + 1 special token" in lines
    assert "merges: 343" in lines
    assert f"special tokens: {END!r}=599" in lines
    assert "pattern: gpt2" in lines
    first = tokenizer.merges[0]
    assert lines[lines.index("top merges (3 by count):") + 2].split() == [
        str(first.rank), str(first.token_id), str(first.left), str(first.right),
        str(first.count), str(first.replacements), repr(tokenizer.token_bytes(256).decode()),
    ]
    longest = max(range(256, 599), key=lambda t: (len(tokenizer.token_bytes(t)), -t))
    row = lines[lines.index("longest tokens (3):") + 2].split(maxsplit=2)
    assert row == [str(longest), str(len(tokenizer.token_bytes(longest))),
                   repr(tokenizer.token_bytes(longest).decode())]
    size = len(texts[1].encode("utf-8"))
    tokens = len(tokenizer.encode_ordinary(texts[1]))
    assert size > 1000  # the thousands separator shows
    assert lines[-1] == (f"sample: {sample}: {size:,} bytes -> {tokens:,} tokens, "
                         f"{size / tokens:.3f} bytes per token")


def test_inspect_byte_model_and_word_model(tmp_path, capsys):
    model = tmp_path / "bytes.json"
    bytepair.train_bytes([b"aaa", b"aba"], 2).save(model)
    code, out, _ = run(capsys, "inspect", model)
    assert code == 0
    assert "pattern: none (each document is one piece)" in out
    assert "special tokens: none" in out
    words = tmp_path / "words.json"
    bytepair.train_words({"low": 5, "lower": 2}, 2).save(words)
    code, out, _ = run(capsys, "inspect", words)
    assert code == 0 and "kind: word mode" in out and "rules: 2" in out
    assert_bad_input(capsys, tmp_path, ["decode", words, "1"], "word-mode model")


# -- trace ------------------------------------------------------------------

def test_trace_prints_the_chapter_trace(capsys):
    code, out, err = run(capsys, "trace", "aaa", "aba")
    assert (code, out, err) == (0, CHAPTER_TRACE, "")
    merges = [line for line in out.splitlines() if line.startswith("MERGE")]
    assert merges == [
        "MERGE rank=0 left=97 right=97 count=2 replacements=1 token=256 bytes_hex=6161",
        "MERGE rank=1 left=97 right=98 count=1 replacements=1 token=257 bytes_hex=6162",
    ]


def test_trace_edges(capsys):
    code, out, err = run(capsys, "trace", "--merges", 0, "ab")
    assert out.splitlines() == ["TRACE bpe-merges-v1 BEGIN", "STAGE 0 DOC 0 [97, 98]",
                                "TRACE bpe-merges-v1 END"]
    # A document boundary ends every pair: "a" | "a" has no candidate.
    code, out, err = run(capsys, "trace", "a", "a")
    assert code == 0 and "CANDIDATE" not in out
    assert err == "bytepair: stopped after 0 of 2 merges: no adjacent pair left\n"
    code, out, _ = run(capsys, "trace", "--merges", 1, "aaaa")
    assert "MERGE rank=0 left=97 right=97 count=3 replacements=2 token=256 bytes_hex=6161" in out


@given(st.lists(st.text("ab", max_size=7), min_size=1, max_size=4), st.integers(0, 8))
def test_hyp_trace_equals_the_reference_trainer(documents, merges):
    docs = [d.encode() for d in documents]
    lines = list(trace_lines(docs, merges))
    rules, sequences = fit(docs, [1] * len(docs), merges, byte_token)
    merge_lines = [line for line in lines if line.startswith("MERGE ")]
    assert merge_lines == [
        f"MERGE rank={m.rank} left={m.left} right={m.right} count={m.count} "
        f"replacements={m.replacements} token={m.token_id} "
        f"bytes_hex={bytepair.ByteModel(rules).token_bytes(m.token_id).hex()}"
        for m in rules
    ]
    last = len(rules)
    assert [line for line in lines if line.startswith(f"STAGE {last} ")] == [
        f"STAGE {last} DOC {i} [{', '.join(map(str, s))}]" for i, s in enumerate(sequences)
    ]
    for rank in range(len(rules)):
        candidates = [line for line in lines if line.startswith(f"CANDIDATE rank={rank} ")]
        assert sum(line.endswith("winner=yes") for line in candidates) == 1


# -- bad input --------------------------------------------------------------

def _unreadable(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("some text")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything: pretend it cannot
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == path
                            else real_access(p, mode, **kw))
    return path


def _write(tmp_path, name, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _corrupt_model(tmp_path, kind: str) -> Path:
    if kind == "truncated":
        data = b'{"format": "bytepair-model", "version": 1, "kind": "tokenizer", "merges": [\n [97, 97'
    elif kind == "bad merge":
        data = json.dumps({"format": "bytepair-model", "version": 1, "kind": "tokenizer",
                           "pattern": None, "special_tokens": [], "merges": [[300, 97, 1, 1]]}).encode()
    else:  # not a model at all
        data = b"\x89PNG\r\n\x1a\n"
    return _write(tmp_path, "corrupt.json", data)


TRAIN_CASES = {
    "missing file": (lambda t, m: [t / "nope.txt"], ["'", "nope.txt", "no such file"]),
    "unreadable file": (lambda t, m: [_unreadable(t, m)], ["secret.txt", "cannot read"]),
    "empty directory": (lambda t, m: [(t / "empty").mkdir() or t / "empty"],
                        ["'", "empty", "holds no file"]),
    "directory with no text": (
        lambda t, m: [(t / "d").mkdir() or _write(t / "d", "a.txt", b"").parent],
        ["empty corpus"]),
    "empty corpus": (lambda t, m: [_write(t, "empty.txt", b"")], ["empty corpus"]),
    "glob matching nothing": (lambda t, m: [t / "*.nothing"], ["matches no file"]),
    "invalid UTF-8 in text mode": (
        lambda t, m: [_write(t, "ok.txt", b"fine"), _write(t, "latin1.txt", b"caf\xe9 au lait")],
        ["latin1.txt", "invalid UTF-8", "byte offset 3"]),
    "JSONL line that is not JSON": (
        lambda t, m: [_write(t, "r.jsonl", b'{"text": "a"}\n{"text": \n')],
        ["r.jsonl:2", "not a JSON line"]),
    "JSONL line without the field": (
        lambda t, m: [_write(t, "r.jsonl", b'{"text": "a"}\n\n{"body": "b"}\n')],
        ["r.jsonl:3", "no field 'text'"]),
    "not gzip": (lambda t, m: [_write(t, "plain.txt.gz", b"plain text")], ["plain.txt.gz", "gzip"]),
    "unknown pattern": (lambda t, m: [_write(t, "a.txt", b"text"), "--pretokenize", "gpt3"],
                        ["unknown pattern 'gpt3'", "did you mean 'gpt2'"]),
    "invalid regex": (lambda t, m: [_write(t, "a.txt", b"text"), "--pretokenize", r"(\w+"],
                      ["valid regex", "missing )"]),
    "vocab size below 256 + specials": (
        lambda t, m: [_write(t, "a.txt", b"text"), "--special", "<a>", "--special", "<b>"],
        ["--vocab-size must be at least 258 (256 bytes + 2 special tokens), got 257"]),
    "repeated special token": (
        lambda t, m: [_write(t, "a.txt", b"text"), "--special", "<a>", "--special", "<a>"],
        ["--special must not repeat a token"]),
    "jsonl field without JSONL input": (
        lambda t, m: [_write(t, "a.txt", b"text"), "--jsonl-field", "body"], ["--jsonl-field"]),
    "corrupt init model": (lambda t, m: [_write(t, "a.txt", b"text"), "--init",
                                         _corrupt_model(t, "truncated")],
                           ["corrupt.json", "not a bytepair model"]),
    "missing init model": (lambda t, m: [_write(t, "a.txt", b"text"), "--init", t / "none.json"],
                           ["No such file or directory", "none.json"]),
    "init with more merges": (
        lambda t, m: [_write(t, "a.txt", b"text"), "--init", _small_model(t)],
        ["--init: the model already has 2 merges, more than the"]),
}


def _small_model(tmp_path) -> Path:
    tokenizer = bytepair.train(["aaa aba"], merges=2, progress=False)
    tokenizer.save(tmp_path / "small.json")
    return tmp_path / "small.json"


@pytest.mark.parametrize("case", list(TRAIN_CASES))
def test_train_bad_input(tmp_path, capsys, monkeypatch, case):
    build, words = TRAIN_CASES[case]
    work = tmp_path / "work"
    work.mkdir()
    inputs = build(work, monkeypatch)
    size = ["--merges", "1"] if "init" in case else ["--vocab-size", "257"]
    assert_bad_input(capsys, tmp_path, ["train", *inputs, *size, "-o", tmp_path / "m.json"], *words)


def test_train_output_in_a_missing_directory(tmp_path, capsys, corpus):
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 5, "-o", tmp_path / "no" / "m.json"],
                     "'", "no", "does not exist")
    assert_bad_input(capsys, tmp_path, ["train", corpus, "--merges", 5, "-o", tmp_path],
                     "is a directory")


def test_failed_training_keeps_an_existing_model(tmp_path, capsys, corpus):
    model = tmp_path / "m.json"
    model.write_text("previous")
    bad = _write(tmp_path, "bad.txt", b"\xff")
    assert_bad_input(capsys, tmp_path, ["train", corpus, bad, "--merges", 5, "-o", model], "bad.txt")
    assert model.read_text() == "previous"


@pytest.mark.parametrize("kind", ["truncated", "bad merge", "binary"])
@pytest.mark.parametrize("command", [["encode", "{}", "text"], ["decode", "{}", "1"],
                                     ["inspect", "{}"], ["export", "{}", "--to", "tokenizers", "-o", "{out}"]])
def test_corrupt_model_file(tmp_path, capsys, kind, command):
    model = _corrupt_model(tmp_path, kind)
    argv = [a.format(model, out=tmp_path / "out.json") for a in command]
    assert_bad_input(capsys, tmp_path, argv, "corrupt.json")


def test_missing_model_file(tmp_path, capsys):
    assert_bad_input(capsys, tmp_path, ["encode", tmp_path / "none.json", "x"],
                     "No such file or directory", "none.json")


def test_inspect_bad_sample(tmp_path, capsys, trained):
    assert_bad_input(capsys, tmp_path, ["inspect", trained, "--sample", tmp_path / "none.txt"], "none.txt")
    assert_bad_input(capsys, tmp_path, ["inspect", trained, "--sample", _write(tmp_path, "e.txt", b"")],
                     "holds no text")


@pytest.mark.parametrize("argv, words", [
    ([], ["required: COMMAND"]),
    (["nope"], ["invalid choice: 'nope'"]),
    (["train", "a.txt", "-o", "m.json"], ["train: one of the arguments --vocab-size --merges is required"]),
    (["train", "a.txt", "--merges", "1", "--vocab-size", "300", "-o", "m.json"], ["not allowed with"]),
    (["train", "a.txt", "--merges", "-1", "-o", "m.json"], ["--merges must be >= 0, got -1"]),
    (["train", "a.txt", "--merges", "1", "--workers", "0", "-o", "m.json"], ["--workers must be >= 1, got 0"]),
    (["train", "a.txt", "--merges", "1", "--min-frequency", "0", "-o", "m.json"],
     ["--min-frequency must be >= 1, got 0"]),
    (["train", "a.txt", "--vocab-size", "-5", "-o", "m.json"],
     ["--vocab-size must be at least 256 (256 bytes + 0 special tokens), got -5"]),
    (["train", "a.txt", "--vocab-size", "256", "--special", "<s>", "-o", "m.json"],
     ["--vocab-size must be at least 257 (256 bytes + 1 special token), got 256"]),
    (["train", "a.txt", "--merges", "1", "--special", "", "-o", "m.json"],
     ["--special #1 must be a non-empty str"]),
    (["train", "a.txt", "--merges", "1", "--pretokenize", "GPT2", "-o", "m.json"],
     ["--pretokenize: unknown pattern 'GPT2', did you mean 'gpt2'?"]),
    (["train", "a.txt", "--merges", "1", "--pretokenize", "", "-o", "m.json"],
     ["--pretokenize: pattern '' matches the empty string"]),
    (["train", "a.txt", "--merges", "1", "--pretokenize", "x*", "-o", "m.json"],
     ["--pretokenize: pattern 'x*' matches the empty string"]),
    (["train", "a.txt", "--merges", "1", "--pretokenize", "q+", "-o", "m.json"],
     ["--pretokenize: pattern 'q+' matches nothing in the corpus"]),
    (["train", "--merges", "1", "-o", "m.json"], ["required: FILE"]),
    (["export", "m.json", "-o", "x"], ["export: the following arguments are required: --to"]),
    (["export", "m.json", "--to", "sentencepiece", "-o", "x"], ["invalid choice: 'sentencepiece'"]),
    (["encode", "m.json", "t", "--allow-special", "--ordinary"], ["not allowed with"]),
    (["trace"], ["required: DOC"]),
    (["trace", "--merges", "x", "a"], ["--merges: expected an integer, got 'x'"]),
])
def test_usage_errors_are_one_line_naming_the_option(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("some text to train on")
    assert_bad_input(capsys, tmp_path, argv, *words)


def test_help_version_and_demo(capsys):
    code, out, _ = run(capsys, "--version")
    assert (code, out) == (0, f"bytepair {bytepair.__version__}\n")
    code, out, _ = run(capsys, "train", "--help")
    assert code == 0 and "--vocab-size" in out
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "examples:\n  bytepair train " in out
    for command in ("train", "encode", "decode", "inspect", "vocab", "export", "trace"):
        assert f"\n  bytepair {command} " in out
    code, out, _ = run(capsys, "demo", "--merges", 5, "--show", 2)
    assert code == 0
    assert "learned 5 of 5 requested merges" in out
    assert "   0    256   116    104   1303          1303  b'th'" in out
    assert "mode: byte mode, no pre-tokenizer" in out  # why 'e ' and 'd ' become tokens
    code, out, _ = run(capsys, "demo", "--help")
    assert code == 0 and "byte-mode" in out


# -- vocab ------------------------------------------------------------------

def test_vocab_lists_every_token_as_tsv(capsys, trained):
    code, out, err = run(capsys, "vocab", trained)
    assert (code, err) == (0, "")
    rows = [line.split("\t") for line in out.split("\n")[:-1]]
    tokenizer = bytepair.load(trained)
    assert rows[0] == ["id", "bytes", "text"]
    assert [int(r[0]) for r in rows[1:]] == list(range(tokenizer.vocab_size)) == list(range(600))
    assert all(len(r) == 3 for r in rows)
    for token_id, escaped, text in rows[1:]:
        data = tokenizer.id_to_token(int(token_id))
        assert escaped.encode("ascii").decode("unicode_escape").encode("latin-1") == data
        try:
            expected = data.decode("utf-8")
        except UnicodeDecodeError:
            expected = ""
        assert text.encode("latin-1", "backslashreplace").decode("unicode_escape") == expected
        assert text.isprintable()
    assert rows[1 + 10] == ["10", "\\x0a", "\\n"]
    assert rows[1 + 0xC3] == ["195", "\\xc3", ""]  # a lead byte alone is not UTF-8
    assert rows[-1] == ["599", END, END]


# -- the real entry point ---------------------------------------------------

def bytepair_process(*argv, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bytepair", *map(str, argv)], input=stdin,
                          capture_output=True, timeout=120)


def test_subprocess_trace_and_errors(tmp_path):
    result = bytepair_process("trace", "aaa", "aba")
    assert (result.returncode, result.stdout.decode(), result.stderr) == (0, CHAPTER_TRACE, b"")
    result = bytepair_process("train", tmp_path / "nope.txt", "--merges", 3, "-o", tmp_path / "m.json")
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode().splitlines() == [
        f"bytepair: error: FILE: no such file or directory: {str(tmp_path / 'nope.txt')!r}"
    ]
    assert listing(tmp_path) == []


def test_subprocess_pipeline_round_trips_bytes(tmp_path, corpus):
    model = tmp_path / "m.json"
    result = bytepair_process("train", corpus, "--pretokenize", "none", "--merges", 200,
                              "--workers", 2, "-o", model)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"" and b"200 merges" in result.stderr  # piped: summary, no bars
    data = b"In the beginning \xff\xfe was the Word.\n" + MULTILINGUAL.encode("utf-8")
    encoded = bytepair_process("encode", model, stdin=data)
    assert encoded.returncode == 0, encoded.stderr
    decoded = bytepair_process("decode", model, "--bytes", stdin=encoded.stdout)
    assert (decoded.returncode, decoded.stdout) == (0, data)
    text = bytepair_process("decode", model, stdin=encoded.stdout)
    assert text.stdout.decode("utf-8") == data.decode("utf-8", "replace")
