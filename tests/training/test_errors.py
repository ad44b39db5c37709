"""Bad input: a clear exception that names the argument, and nothing half done."""

import errno
import json
import os

import pytest

import bytepair
from bytepair.model.modelfile import VERSION
from bytepair import ModelFormatError
from bytepair.formats import load as model_io

MAX_BYTE_MERGES = 2**31 - 256  # token IDs below 2**31, 256 of them taken by bytes
ENGINES = ["naive", "incremental"]


@pytest.fixture
def model():
    return bytepair.train_bytes(["aaa", "aba"], 2)


# --- merges -----------------------------------------------------------------

BAD_MERGES = [
    pytest.param(-1, ValueError, id="negative"),
    pytest.param(1.0, TypeError, id="float"),
    pytest.param("3x", ValueError, id="str"),  # a size such as "3" or "8k" is a number
    pytest.param(None, TypeError, id="None"),
    pytest.param(True, TypeError, id="bool"),
    pytest.param(False, TypeError, id="bool-false"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("merges", "error"), BAD_MERGES)
def test_bad_merges_in_byte_mode(engine, merges, error):
    with pytest.raises(error, match="merges"):
        bytepair.train_bytes(["aaa"], merges, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("merges", "error"), BAD_MERGES)
def test_bad_merges_in_word_mode(engine, merges, error):
    with pytest.raises(error, match="merges"):
        bytepair.learn_bpe({"low": 1}, merges, engine=engine)
    with pytest.raises(error, match="merges"):
        bytepair.train_words({"low": 1}, merges, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_merges_beyond_31_bit_token_ids(engine):
    with pytest.raises(ValueError, match="merges"):
        bytepair.train_bytes(["aaa"], MAX_BYTE_MERGES + 1, engine=engine)
    with pytest.raises(ValueError, match="merges"):
        bytepair.train_bytes(["aaa"], 2**64, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_largest_merge_count_is_accepted_as_an_upper_bound(engine):
    model = bytepair.train_bytes(["ab"], MAX_BYTE_MERGES, engine=engine)
    assert [(m.left, m.right) for m in model.merges] == [(97, 98)]
    # Word symbols are strings, not 32-bit IDs: no such limit there.
    assert bytepair.learn_bpe({"ab": 1}, 2**40, engine=engine) == [("a", "b")]


# --- documents, words and counts ---------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("document", [3, None, [97, 98], ("a",), 1.5], ids=repr)
def test_document_neither_bytes_nor_str(engine, document):
    with pytest.raises(TypeError, match=r"documents\[1\]"):
        bytepair.train_bytes(["ok", document, "ok"], 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("documents", ["aaa", b"aaa"], ids=["str", "bytes"])
def test_a_single_document_is_not_a_corpus(engine, documents):
    with pytest.raises(TypeError, match="documents"):
        bytepair.train_bytes(documents, 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("documents", [None, 5], ids=repr)
def test_documents_not_iterable(engine, documents):
    with pytest.raises(TypeError, match="documents"):
        bytepair.train_bytes(documents, 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_str_document_that_is_not_utf8_encodable(engine):
    # A lone surrogate has no UTF-8 encoding; the error should say which document.
    with pytest.raises(ValueError, match=r"documents\[1\]"):
        bytepair.train_bytes(["ok", "a\ud800b"], 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_bytes_like_documents_are_accepted(engine):
    model = bytepair.train_bytes([bytearray(b"aaa"), memoryview(b"aba")], 2, engine=engine)
    assert model.sequences == [[256, 97], [257, 97]]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("word", [1, b"low", None, ("l", "o")], ids=repr)
def test_word_not_str(engine, word):
    with pytest.raises(TypeError, match="word_counts"):
        bytepair.learn_bpe({"ok": 1, word: 2}, 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("count", "error"),
    [(0, ValueError), (-3, ValueError), (1.0, TypeError), ("2", TypeError),
     (True, TypeError), (None, TypeError)],
    ids=repr,
)
def test_count_not_a_positive_int(engine, count, error):
    with pytest.raises(error, match=r"word_counts\['low'\]"):
        bytepair.train_words({"ok": 1, "low": count}, 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_weighted_pair_total_beyond_64_bits(engine):
    # Counts are signed 64-bit in the compiled engine; both engines refuse more.
    with pytest.raises(ValueError, match="word_counts"):
        bytepair.train_words({"abc": 2**62}, 1, engine=engine)  # 2 windows x 2**62
    with pytest.raises(ValueError, match="word_counts"):
        bytepair.train_words({"ab": 2**63}, 1, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("word_counts", [["low", "lower"], None, "low"], ids=repr)
def test_word_counts_not_a_mapping(engine, word_counts):
    with pytest.raises(TypeError, match="word_counts"):
        bytepair.learn_bpe(word_counts, 1, engine=engine)


@pytest.mark.parametrize(("end_of_word", "error"), [("", ValueError), (5, TypeError)], ids=repr)
def test_bad_end_of_word(end_of_word, error):
    with pytest.raises(error, match="end_of_word"):
        bytepair.learn_bpe({"low": 1}, 1, end_of_word=end_of_word)
    with pytest.raises(error, match="end_of_word"):
        bytepair.encode("low", [], end_of_word=end_of_word)


def test_encode_word_not_str():
    with pytest.raises(TypeError, match="word"):
        bytepair.encode(b"low", [("l", "o")])


@pytest.mark.parametrize("rule", [("l",), ["l", "o"], ("l", ""), ("l", 5)], ids=repr)
def test_encode_bad_rule(rule):
    with pytest.raises(TypeError, match=r"rules\[1\]"):
        bytepair.encode("low", [("l", "o"), rule])


# --- engine -----------------------------------------------------------------


@pytest.mark.parametrize("engine", ["fast", "Naive", "", 1])
def test_unknown_engine(engine):
    with pytest.raises(ValueError, match="engine"):
        bytepair.train_bytes(["aaa"], 1, engine=engine)
    with pytest.raises(ValueError, match="engine"):
        bytepair.learn_bpe({"low": 1}, 1, engine=engine)


# --- decode, encode, token_bytes ----------------------------------------------


@pytest.mark.parametrize("token", [258, -1, 2**40])
def test_decode_outside_the_vocabulary(model, token):
    with pytest.raises(ValueError, match=r"ids\[1\]"):
        model.decode([97, token])


@pytest.mark.parametrize("token", ["a", 1.0, True, None], ids=repr)
def test_decode_non_int_id(model, token):
    with pytest.raises(TypeError, match=r"ids\[0\]"):
        model.decode([token])


@pytest.mark.parametrize(("token", "error"), [(258, ValueError), (-1, ValueError), ("a", TypeError)])
def test_token_bytes_outside_the_vocabulary(model, token, error):
    with pytest.raises(error, match="token_id"):
        model.token_bytes(token)


@pytest.mark.parametrize("data", [5, None, [97, 98]], ids=repr)
def test_encode_neither_bytes_nor_str(model, data):
    with pytest.raises(TypeError, match="data"):
        model.encode(data)


def test_encode_str_that_is_not_utf8_encodable(model):
    with pytest.raises(ValueError, match="data"):
        model.encode("a\ud800b")


# --- loading ----------------------------------------------------------------


def write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def model_file(**changes) -> str:
    data = {"format": "bytepair-model", "version": 1, "kind": "bytes", "merges": [[97, 97, 2, 1]]}
    data.update(changes)
    return json.dumps(data)


NOT_MODELS = {
    "plain-text": "hello, world\n",
    "json-list": "[1, 2, 3]",
    "other-json": json.dumps({"name": "not a model"}),
    "other-format": model_file(format="tokenizer.json"),
    "empty": "",
}

CORRUPT = {
    "truncated": model_file()[:-10],
    "merges-not-list": model_file(merges={"0": [97, 97, 2, 1]}),
    "short-row": model_file(merges=[[97, 97, 2]]),
    "negative-count": model_file(merges=[[97, 97, -2, 1]]),
    "replacements-over-count": model_file(merges=[[97, 97, 1, 2]]),
    "future-token": model_file(merges=[[97, 256, 1, 1]]),
    "repeated-pair": model_file(merges=[[97, 97, 2, 1], [97, 97, 2, 1]]),
    "float-id": model_file(merges=[[97.0, 97, 2, 1]]),
    "bool-count": model_file(merges=[[97, 97, True, 1]]),
    "unknown-kind": model_file(kind="sentences"),
    "word-row-in-byte-model": model_file(merges=[["a", "a", 2, 1]]),
    "int-end-of-word": model_file(kind="words", merges=[], end_of_word=5),
    "empty-end-of-word": model_file(kind="words", merges=[], end_of_word=""),
    "empty-word-symbol": model_file(kind="words", merges=[["", "a", 1, 1]], end_of_word=None),
    "int-row-in-word-model": model_file(kind="words", merges=[[97, 97, 2, 1]], end_of_word=None),
}


@pytest.mark.parametrize("text", NOT_MODELS.values(), ids=NOT_MODELS.keys())
def test_load_a_file_that_is_not_a_model(tmp_path, text):
    path = write(tmp_path / "thing.json", text)
    with pytest.raises(ModelFormatError, match="not a bytepair model") as raised:
        bytepair.load(path)
    assert str(path) in str(raised.value)


def test_load_a_binary_file(tmp_path):
    path = tmp_path / "thing.bin"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ModelFormatError) as raised:
        bytepair.load(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("text", CORRUPT.values(), ids=CORRUPT.keys())
def test_load_a_corrupt_model(tmp_path, text):
    path = write(tmp_path / "model.json", text)
    with pytest.raises(ModelFormatError) as raised:
        bytepair.load(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("version", [VERSION + 1, 99])
def test_load_a_newer_format_version(tmp_path, version):
    path = write(tmp_path / "model.json", model_file(version=version))
    with pytest.raises(ModelFormatError, match=f"version {version}") as raised:
        bytepair.load(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("version", [0, -1, "1", None, True, 1.0], ids=repr)
def test_load_an_invalid_format_version(tmp_path, version):
    path = write(tmp_path / "model.json", model_file(version=version))
    with pytest.raises(ModelFormatError, match="version"):
        bytepair.load(path)


def test_format_error_is_a_value_error():
    assert issubclass(ModelFormatError, ValueError)


def test_load_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        bytepair.load(tmp_path / "absent.json")


# --- saving -----------------------------------------------------------------


def test_save_to_a_missing_directory(tmp_path, model):
    target = tmp_path / "absent" / "model.json"
    with pytest.raises(FileNotFoundError, match="path") as raised:
        model.save(target)
    assert str(target.parent) in str(raised.value)
    assert os.listdir(tmp_path) == []


class FailsHalfway:
    """A text file whose write stores half the text, then fails (a full disk)."""

    def __init__(self, handle):
        self._handle = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._handle.close()

    def write(self, text):
        self._handle.write(text[: len(text) // 2])
        self._handle.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._handle, name)


def fail_while_writing(monkeypatch):
    real_fdopen = os.fdopen
    monkeypatch.setattr(model_io.os, "fdopen", lambda *a, **k: FailsHalfway(real_fdopen(*a, **k)))


def fail_at_fsync(monkeypatch):
    def fsync(fd):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(model_io.os, "fsync", fsync)


def fail_at_rename(monkeypatch):
    def replace(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(model_io.os, "replace", replace)


@pytest.mark.parametrize("fail", [fail_while_writing, fail_at_fsync, fail_at_rename])
@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
def test_failed_save_leaves_no_half_written_file(tmp_path, monkeypatch, fail, existing):
    old = bytepair.train_bytes(["aaa"], 1)
    target = tmp_path / "model.json"
    if existing:
        old.save(target)
        before = target.read_bytes()
    new = bytepair.train_bytes(["abcabcabcabc" * 50], 30)
    fail(monkeypatch)
    with pytest.raises(OSError):
        new.save(target)
    monkeypatch.undo()
    if existing:
        assert os.listdir(tmp_path) == ["model.json"]
        assert target.read_bytes() == before
        assert bytepair.load(target) == old
    else:
        assert os.listdir(tmp_path) == []


# -- pre-tokenizer patterns: names, custom regexes, empty and useless patterns -

@pytest.mark.parametrize("name, suggestion", [("GPT2", "gpt2"), ("gpt5", "gpt2"),
                                              ("whitspace", "whitespace"), ("o200", "o200k")])
def test_unknown_pattern_names_are_refused_with_a_suggestion(name, suggestion):
    with pytest.raises(ValueError, match=rf"pretokenize: unknown pattern '{name}', did you mean '{suggestion}'\?"):
        bytepair.train(["some text"], merges=2, pretokenize=name, workers=1, progress=False)
    with pytest.raises(ValueError, match=rf"unknown pattern '{name}'"):
        bytepair.train_bytes(["some text"], 2, pretokenize=name)


def test_custom_regex_as_compiled_pattern_or_str_with_regex_characters():
    import re

    import regex

    docs = ["ab12 cd345", "x9"]
    as_str = bytepair.train(docs, merges=3, pretokenize=r"\d+|\D+", workers=1, progress=False)
    as_regex = bytepair.train(docs, merges=3, pretokenize=regex.compile(r"\d+|\D+"), workers=1,
                              progress=False)
    as_re = bytepair.train(docs, merges=3, pretokenize=re.compile(r"\d+|\D+"), workers=1,
                           progress=False)
    assert as_str == as_regex == as_re and as_str.pattern == r"\d+|\D+"
    # A plain word as a regex: compile it.
    word = bytepair.train(["ab ab"], merges=1, pretokenize=regex.compile("ab"), workers=1,
                          progress=False)
    assert word.encode("ab ab") == [256, 32, 256]
    with pytest.raises(ValueError, match=r"compile flags are not kept.*\(\?i\)"):
        bytepair.train(docs, merges=3, pretokenize=regex.compile("a", regex.IGNORECASE))


@pytest.mark.parametrize("pattern", ["", "x*", r"\b", "(?=a)", "a|"])
def test_patterns_that_match_the_empty_string_are_refused(pattern):
    with pytest.raises(ValueError, match=r"pretokenize: pattern .* matches the empty string"):
        bytepair.train(["abc"], merges=2, pretokenize=pattern, workers=1, progress=False)


def test_a_pattern_that_matches_nothing_in_the_corpus_is_refused():
    with pytest.raises(ValueError, match=r"pattern 'q\+' matches nothing in the corpus"):
        bytepair.train(["abc abc", "def"], merges=2, pretokenize="q+", workers=1, progress=False)
    with pytest.raises(ValueError, match=r"pattern 'q\+' matches nothing in the corpus"):
        bytepair.train_bytes(["abc abc"], 2, pretokenize="q+")
    # One match anywhere is enough.
    assert bytepair.train(["abc", "q"], merges=1, pretokenize="q+", workers=1, progress=False)


# -- a list of file paths is not a list of texts -----------------------------

def test_a_list_of_file_paths_is_refused_pointing_to_files(tmp_path):
    (tmp_path / "a.txt").write_text("hello hello")
    paths = [str(tmp_path / "a.txt"), "b.txt.gz"]
    with pytest.raises(ValueError, match=r"corpus: a list of file paths .* bytepair\.Files\("):
        bytepair.train(paths, merges=2, workers=1, progress=False)
    # Texts that happen to mention a file are texts; Path objects and Files are files.
    assert bytepair.train(["see a.txt", "a.txt"], merges=1, workers=1, progress=False)
    from_paths = bytepair.train([tmp_path / "a.txt"], merges=2, workers=1, progress=False)
    from_files = bytepair.train(bytepair.Files(paths[0]), merges=2, workers=1, progress=False)
    assert from_paths == from_files and from_files.token_bytes(256) in (b"he", b"ll", b"el", b"lo")


def test_jsonl_field_needs_a_jsonl_input(tmp_path):
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(ValueError, match=r"jsonl_field: no input is a JSON Lines file"):
        bytepair.Files(tmp_path / "a.txt", jsonl_field="body")
