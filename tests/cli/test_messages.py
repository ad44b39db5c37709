"""Messages that leave nobody guessing: other tools' files named, unknown options with the right
spelling, sizes written 32k or 32Ki, tiktoken's pattern names, interrupted and resumed runs told
how to go on, and models without merges or with an impossible SuperBPE size said plainly."""

import gzip
import re
import json
import shlex
import signal
import struct
import subprocess
import sys
import time

import pytest

import bytepair
from bytepair.cli import main as cli_main
from bytepair._util.validate import parse_size as size_number
from helpers import DATA, assert_bad_input, run

CORPUS_TEXT = (DATA / "kjv-genesis-exodus.txt").read_text()[:40_000]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS_TEXT)
    return path


# -- files of other tools ---------------------------------------------------------------------

def _sentencepiece_model() -> bytes:
    """A serialized sentencepiece ModelProto with two pieces (field 1: piece text, 2: score,
    3: type), written by hand so that the test needs no sentencepiece install."""
    def piece(text: str, kind: int) -> bytes:
        body = b"\x0a" + bytes([len(text.encode())]) + text.encode() + b"\x15" + \
            struct.pack("<f", -1.0) + b"\x18" + bytes([kind])
        return b"\x0a" + bytes([len(body)]) + body
    return piece("<unk>", 2) + piece("\u2581the", 1) + b"\x12\x04\x08\x01\x10\x02"


@pytest.fixture(scope="module")
def gpt2_files(tmp_path_factory):
    """vocab.json and merges.txt as GPT-2 ships them (written by tokenizers' ByteLevelBPE)."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = tmp_path_factory.mktemp("gpt2-files")
    corpus = folder / "corpus.txt"
    corpus.write_text(CORPUS_TEXT)
    trainer = tokenizers.ByteLevelBPETokenizer()
    trainer.train([str(corpus)], vocab_size=400, show_progress=False)
    trainer.save_model(str(folder))
    return folder / "vocab.json", folder / "merges.txt"


@pytest.mark.parametrize("kind, words", [
    ("sentencepiece", ("sentencepiece model", "does not read")),
    ("merges", ("merges.txt", "ByteLevelBPETokenizer")),
    ("vocab", ("vocab.json", "without its merges", "ByteLevelBPETokenizer")),
    ("tokenizer_config", ("tokenizer_config.json", "directory")),
    ("special_tokens_map", ("special_tokens_map.json", "directory")),
    ("config", ("config.json", "not a tokenizer")),
    ("gzip", ("gzip", "decompress")),
    ("wordpiece", ("WordPiece vocab.txt", "does not read")),
])
def test_other_tools_files_are_named_with_what_to_pass(kind, words, tmp_path, gpt2_files, capsys):
    vocab, merges = gpt2_files
    path = tmp_path / {"sentencepiece": "spm.model", "gzip": "tok.json.gz",
                       "wordpiece": "vocab.txt"}.get(kind, f"{kind}.json")
    if kind == "wordpiece":
        path.write_text("[PAD]\n[unused0]\n[UNK]\n[CLS]\n[SEP]\nthe\n##s\n")
    elif kind == "sentencepiece":
        path.write_bytes(_sentencepiece_model())
    elif kind == "merges":
        path = merges
    elif kind == "vocab":
        path = vocab
    elif kind == "gzip":
        path.write_bytes(gzip.compress(b'{"format": "bytepair-model"}'))
    else:
        path.write_text(json.dumps({
            "tokenizer_config": {"tokenizer_class": "GPT2Tokenizer", "model_max_length": 1024},
            "special_tokens_map": {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
            "config": {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"]},
        }[kind]))
    with pytest.raises(bytepair.ModelFormatError) as caught:
        bytepair.load(path)
    for word in words:
        assert word in str(caught.value)
    line = assert_bad_input(capsys, tmp_path, ["encode", path, "a"], *words)
    assert "codec" not in line and "Expecting value" not in line


def test_the_advice_for_vocab_and_merges_gives_a_file_bytepair_reads(gpt2_files, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    vocab, merges = gpt2_files
    # What the message says to run, run as it says.
    tokenizers.ByteLevelBPETokenizer(str(vocab), str(merges)).save(str(tmp_path / "tokenizer.json"))
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    back = bytepair.load(tmp_path / "tokenizer.json")
    text = "In the beginning God created the heaven and the earth."
    assert back.encode(text) == hf.encode(text).ids


# -- option spellings -------------------------------------------------------------------------

@pytest.mark.parametrize("given, right", [
    ("--vocab_size", "--vocab-size"), ("--min_frequency", "--min-frequency"),
    ("--vocab-sise", "--vocab-size"), ("--pretokeniz", None),
])
def test_unknown_option_is_named_with_the_right_one(given, right, corpus, tmp_path, capsys):
    argv = ["train", corpus, given, "8192", "-o", tmp_path / "m.json"]
    if right is None:  # an abbreviation argparse accepts: not an unknown option
        code, _, err = run(capsys, *argv, "--vocab-size", "300", "-q")
        assert code == 2 and "unrecognized option" not in err
        return
    line = assert_bad_input(capsys, tmp_path, argv, f"unrecognized option {given}",
                            f"did you mean {right}?")
    assert "required" not in line


def test_values_that_start_with_a_dash_are_not_options(tmp_path, capsys):
    model = tmp_path / "m.json"
    bytepair.train([b"ab ab -1 -2"], merges=2, pretokenize=None).save(model)
    code, out, err = run(capsys, "decode", model, "97", "98")
    assert code == 0, err
    code, out, err = run(capsys, "encode", model, "--", "-5 a")
    assert code == 0 and out.split(), err
    assert_bad_input(capsys, tmp_path, ["encode", model, "-hello"], "unrecognized option -hello",
                     "-- -hello")
    code, out, err = run(capsys, "encode", model, "--", "-hello")
    assert code == 0 and out.split(), err


def test_sizes_take_k_and_ki():
    assert [size_number(t) for t in ("32k", "32K", "32Ki", "1M", "1Mi", "300")] == \
        [32_000, 32_000, 32_768, 1_000_000, 1 << 20, 300]
    for bad in ("32kb", "k", "3.5k", "32KiB"):
        with pytest.raises(ValueError):
            size_number(bad)


def test_learn_words_merges_take_units(corpus, tmp_path, capsys):
    code, _, err = run(capsys, "learn-words", corpus, "--merges", "1k", "-o", tmp_path / "w.model",
                       "-q")
    assert code == 0, err
    assert bytepair.load(tmp_path / "w.model") == bytepair.learn_words(corpus, 1000)


def test_vocab_size_with_units_trains_that_size(corpus, tmp_path, capsys):
    for given, size in (("1k", 1000), ("1Ki", 1024)):
        code, _, err = run(capsys, "train", corpus, "--vocab-size", given, "-o", tmp_path / "m.json", "-q")
        assert code == 0, err
        assert bytepair.load(tmp_path / "m.json").vocab_size == size
    line = assert_bad_input(capsys, tmp_path, ["train", corpus, "--vocab-size", "1kb", "-o",
                                               tmp_path / "x.json"], "--vocab-size", "32Ki")
    assert "1kb" in line


def test_evaluate_sizes_take_units(corpus, tmp_path, capsys):
    model = tmp_path / "m.json"
    bytepair.train(corpus, vocab_size=1100).save(model)
    code, out, err = run(capsys, "evaluate", model, "--sample", corpus, "--sizes", "1k")
    assert code == 0, err
    assert "1,000" in out or "1000" in out


@pytest.mark.parametrize("tiktoken_name, name", [("cl100k_base", "cl100k"), ("o200k_base", "o200k"),
                                                  ("r50k_base", "gpt2")])
def test_pretokenize_takes_tiktoken_names(tiktoken_name, name, corpus, tmp_path, capsys):
    code, _, err = run(capsys, "train", corpus, "--vocab-size", "300", "--pretokenize",
                       tiktoken_name, "-o", tmp_path / "m.json", "-q")
    assert code == 0, err
    assert bytepair.load(tmp_path / "m.json").pattern == bytepair.train(
        corpus, vocab_size=300, pretokenize=name).pattern
    code, _, err = run(capsys, "count", corpus, "--pretokenize", tiktoken_name, "-o",
                       tmp_path / "c.counts", "-q")
    assert code == 0, err


# -- interrupts and resumes -------------------------------------------------------------------

@pytest.mark.parametrize("stop, code, word", [(KeyboardInterrupt, 130, "interrupted"),
                                              (cli_main.Terminated, 143, "terminated")])
@pytest.mark.parametrize("command", ["train", "count"])
def test_a_stopped_run_with_a_checkpoint_says_how_to_resume(stop, code, word, command, corpus,
                                                            tmp_path, capsys, monkeypatch):
    def stopped(*args, **kwargs):
        raise stop

    monkeypatch.setattr(f"bytepair.training.{command}",
                        stopped)
    checkpoint = tmp_path / "my checkpoint"
    argv = [command, str(corpus), *(["--vocab-size", "400"] if command == "train" else []),
            "--checkpoint", str(checkpoint), "-o", str(tmp_path / "out"), "-q"]
    line = _stderr_of(capsys, argv, code)
    assert line.startswith(f"bytepair: {word}; ")
    assert repr(str(checkpoint)) in line
    assert line.endswith("continue with: bytepair " + shlex.join(argv + ["--resume"]))
    # Without a checkpoint there is nothing to resume.
    plain = [a for a in argv if a not in ("--checkpoint", str(checkpoint))]
    assert _stderr_of(capsys, plain, code) == f"bytepair: {word}"


def _stderr_of(capsys, argv, code) -> str:
    got, out, err = run(capsys, *argv)
    assert (got, out) == (code, "")
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_sigint_during_a_checkpointed_run_prints_the_resume_command(tmp_path):
    """The real signal, in a child process: the line names the command, and it works."""
    corpus = tmp_path / "big.txt"
    corpus.write_text(CORPUS_TEXT * 40)
    checkpoint = tmp_path / "ck"
    argv = [sys.executable, "-m", "bytepair", "train", str(corpus), "--vocab-size", "20000",
            "--checkpoint", str(checkpoint), "-o", str(tmp_path / "m.json"), "-q"]
    child = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (checkpoint / "checkpoint.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    if child.returncode == 0:
        pytest.skip("the run ended before the signal")
    assert child.returncode == 130, err
    line = err.strip().splitlines()[-1]
    assert "continue with: bytepair train" in line and line.endswith("--resume")
    resumed = subprocess.run([sys.executable, "-m", *shlex.split(line.split("continue with: ")[1])],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert bytepair.load(tmp_path / "m.json") == bytepair.train(corpus, vocab_size=20000)


def test_resume_at_a_smaller_size_speaks_in_the_unit_given(corpus, tmp_path, capsys):
    checkpoint = tmp_path / "ck"
    code, _, err = run(capsys, "train", corpus, "--vocab-size", "600", "--checkpoint", checkpoint,
                       "-o", tmp_path / "big.json", "-q")
    assert code == 0, err
    line = assert_bad_input(capsys, tmp_path, [
        "train", corpus, "--vocab-size", "400", "--checkpoint", checkpoint, "--resume",
        "-o", tmp_path / "small.json"], "--vocab-size 400", "vocabulary of 600", "truncation",
        "--vocab-size 400,600 -o")
    assert "merges, more than the" not in line
    # The command it gives writes the smaller model, equal to a run to that size.
    suggested = f"{tmp_path}/small-{{vocab_size}}.json"
    assert suggested in line
    code, _, err = run(capsys, "train", corpus, "--vocab-size", "400,600", "--checkpoint",
                       checkpoint, "--resume", "-o", suggested, "-q")
    assert code == 0, err
    assert bytepair.load(tmp_path / "small-400.json") == bytepair.train(corpus, vocab_size=400)
    assert_bad_input(capsys, tmp_path, [
        "train", corpus, "--merges", "100", "--checkpoint", checkpoint, "--resume",
        "-o", tmp_path / "m.json"], "--merges 100", "344 merges", "truncate")


# -- small sizes ------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["--vocab-size", "256"], ["--merges", "0"],
                                  ["--vocab-size", "257", "--special", "<|e|>"]])
def test_a_model_without_merges_is_said(argv, corpus, tmp_path, capsys):
    code, _, err = run(capsys, "train", corpus, *argv, "-o", tmp_path / "m.json")
    assert code == 0, err
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "no merges" in warning[0]
    code, _, err = run(capsys, "train", corpus, "--vocab-size", "300", "-o", tmp_path / "m.json")
    assert "warning" not in err


@pytest.mark.parametrize("argv, words", [
    (["--vocab-size", "8k", "--superbpe", "8k"], ("--superbpe: the transition 8,000 must be smaller than the final "
                                                  "vocabulary size, 8,000",)),
    (["--vocab-size", "8192", "--superbpe", "8192", "--special", "<|e|>"],
     ("less its special tokens, 8,192 - 1 = 8,191",)),
    (["--merges", "100", "--superbpe", "400"], ("256 bytes + 100 learned tokens = 356",)),
])
def test_superbpe_size_error_reads_plainly(argv, words, corpus, tmp_path, capsys):
    line = assert_bad_input(capsys, tmp_path, ["train", corpus, *argv, "-o", tmp_path / "m.json"],
                            *words)
    assert "bytes and learned tokens" not in line


# -- a damaged file is told in its own fields ----------------------------------------------------

@pytest.mark.parametrize("damage, said", [
    (lambda data: data["merges"][0].__setitem__(1, ""), "merges[0] must join two non-empty str symbols"),
    (lambda data: data.__setitem__("end_of_word", ""), "end_of_word must be a non-empty str"),
])
@pytest.mark.parametrize("command", ["inspect", "vocab"])
def test_a_damaged_word_model_names_its_fields_not_options(damage, said, command, tmp_path):
    """The real command line, as a user runs it: a file's fields are not options the user gave."""
    path = tmp_path / "bad.json"
    bytepair.learn_words({"low": 5, "lower": 2, "newest": 6}, 3, end_of_word="</w>").save(path)
    data = json.loads(path.read_text())
    del data["checksum"]
    damage(data)
    path.write_text(json.dumps(data))
    with pytest.raises(bytepair.ModelFormatError, match=re.escape(said)):
        bytepair.load(path)
    done = subprocess.run([sys.executable, "-m", "bytepair", command, str(path)],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"bytepair: error: {str(path)!r} is corrupt: {said}\n"
