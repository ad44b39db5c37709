"""What a new user meets first in Python: docstrings, patterns from tables, messages, skipped files."""

from __future__ import annotations

import gzip
import inspect
import json
import re

import pytest
from hypothesis import given, strategies as st

import bytepair
from bytepair import Files, ModelFormatError
from bytepair.read import text as corpus_module
from bytepair.read.corpus import unreadable


# -- docstrings -------------------------------------------------------------

def _public_callables():
    for name in bytepair.__all__:
        obj = getattr(bytepair, name)
        if inspect.isclass(obj):
            if issubclass(obj, Exception):
                continue
            # A dataclass's generated __init__ is described by the class docstring.
            own = "__init__" in vars(obj) and obj.__init__.__doc__ is not None
            yield f"{name}.__init__", obj.__init__ if own else obj
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and (inspect.isfunction(value)
                                                 or isinstance(value, (classmethod, staticmethod))):
                    yield f"{name}.{attr}", getattr(obj, attr)
        elif callable(obj):
            yield name, obj


@pytest.mark.parametrize("name, function", list(_public_callables()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_parameter_is_described_and_typed(name, function):
    doc = inspect.getdoc(function) or ""
    assert doc and not doc.startswith("Initialize self"), f"{name} has no docstring of its own"
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in ("self", "cls"):
            continue
        # Described: the name appears in a ``literal`` of the docstring, or heads an "Args:" entry.
        assert (re.search(rf"``[^`]*\b{parameter.name}\b[^`]*``", doc)
                or re.search(rf"^\s+{parameter.name}: \S", doc, re.MULTILINE)), \
            f"{name}: {parameter.name} undescribed"
        assert parameter.annotation is not inspect.Parameter.empty, f"{name}: {parameter.name} untyped"


def test_merge_signature_shows_plain_types():
    signature = str(inspect.signature(bytepair.Merge))
    assert "ForwardRef" not in signature
    assert signature.startswith("(rank: int, left: int | str, right: int | str")


def test_train_describes_what_help_shows():
    doc = inspect.getdoc(bytepair.train)
    for name in ("per_line", "jsonl_field", "text_column", "special_tokens", "progress", "client"):
        assert f"``{name}``\n" in doc


# -- count tables carry their pattern ---------------------------------------

DOCS = ["low lower lowest", "new newer newest", "wide wider widest 12 345"] * 3


def test_a_count_table_trains_with_its_own_pattern():
    table = bytepair.count(DOCS, pretokenize="whitespace", workers=1, progress=False)
    implied = bytepair.train(table, merges=12, progress=False)
    explicit = bytepair.train(table, merges=12, pretokenize="whitespace", progress=False)
    assert implied == explicit
    assert implied.pattern == bytepair.count([], pretokenize="whitespace").pattern
    # The same as training on the documents with that pattern.
    assert implied == bytepair.train(DOCS, merges=12, pretokenize="whitespace", workers=1, progress=False)


def test_a_count_table_of_no_split_trains_without_one():
    table = bytepair.count(DOCS, pretokenize=None, workers=1, progress=False)
    assert bytepair.train([table, table], merges=5, progress=False).pattern is None


def test_a_conflicting_pattern_names_both():
    table = bytepair.count(DOCS, pretokenize="cl100k", workers=1, progress=False)
    with pytest.raises(ValueError) as raised:
        bytepair.train(table, merges=5, pretokenize="o200k", progress=False)
    assert str(raised.value) == "pretokenize: the counts were cut with cl100k, not o200k"


def test_init_supplies_the_pattern_and_a_conflict_names_both(tmp_path):
    start = bytepair.train(DOCS, merges=3, pretokenize="whitespace", workers=1, progress=False)
    continued = bytepair.train(DOCS, merges=8, init=start, workers=1, progress=False)
    assert continued == bytepair.train(DOCS, merges=8, pretokenize="whitespace", workers=1, progress=False)
    with pytest.raises(ValueError) as raised:
        bytepair.train(DOCS, merges=8, init=start, pretokenize="gpt2", workers=1, progress=False)
    assert str(raised.value) == ("init was trained with a different pretokenize pattern: whitespace, "
                                 "where pretokenize names gpt2")
    table = bytepair.count(DOCS, workers=1, progress=False)
    with pytest.raises(ValueError) as raised:
        bytepair.train(table, merges=8, init=start, progress=False)
    assert str(raised.value) == ("init was trained with a different pretokenize pattern: whitespace, "
                                 "where the counts were cut with gpt2")


# -- messages of load and patterns ------------------------------------------

def test_loading_a_count_table_says_what_it_is(tmp_path):
    path = tmp_path / "x.counts"
    bytepair.count(DOCS, workers=1, progress=False).save(path)
    with pytest.raises(ModelFormatError) as raised:
        bytepair.load(path)
    assert str(raised.value) == (
        f"{str(path)!r} is a piece-count table, not a model: read it with "
        "bytepair.PieceCounts.load, or train a model from it (bytepair.train(table, ...))")


def test_a_custom_regex_in_a_model_is_untrusted_not_corrupt(tmp_path):
    path = tmp_path / "x.json"
    bytepair.train(DOCS, merges=3, pretokenize=r"\w+|\W+", workers=1, progress=False).save(path)
    with pytest.raises(ModelFormatError) as raised:
        bytepair.load(path)
    message = str(raised.value)
    assert "corrupt" not in message
    assert message == (f"{str(path)!r} holds a custom regex pattern '\\\\w+|\\\\W+'; a regex from a file "
                       "can take exponential time on some text, so pass trust_pattern=True if the "
                       "file comes from a trusted source")
    assert bytepair.load(path, trust_pattern=True).pattern == r"\w+|\W+"


def test_a_repeated_special_token_in_a_file_names_the_field(tmp_path):
    path = tmp_path / "x.json"
    bytepair.train(DOCS, merges=3, special_tokens=["<a>", "<b>"], workers=1, progress=False).save(path)
    data = json.loads(path.read_text())
    data["special_tokens"] = ["<a>", "<b>", "<a>"]
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFormatError) as raised:
        bytepair.load(path)
    assert str(raised.value) == (f"{str(path)!r} is corrupt: 'special_tokens' must not repeat a token, "
                                 "got '<a>' twice")


def test_a_repeated_special_token_argument_names_it():
    with pytest.raises(ValueError) as raised:
        bytepair.train(DOCS, merges=3, special_tokens=["<a>", "<b>", "<b>"], progress=False)
    assert str(raised.value) == "special_tokens must not repeat a token, got '<b>' twice"


@pytest.mark.parametrize("name, pattern, model", [
    ("gpt4", "cl100k", "GPT-4"), ("gpt-4", "cl100k", "GPT-4"), ("GPT-4", "cl100k", "GPT-4"),
    ("cl100k_base", "cl100k", "GPT-4"), ("gpt4o", "o200k", "GPT-4o"), ("GPT-4o", "o200k", "GPT-4o"),
    ("o200k_base", "o200k", "GPT-4o"), ("r50k_base", "gpt2", "GPT-2"),
])
def test_model_names_point_at_their_pattern(name, pattern, model):
    with pytest.raises(ValueError) as raised:
        bytepair.train(DOCS, merges=3, pretokenize=name, progress=False)
    assert str(raised.value).startswith(
        f"pretokenize: unknown pattern {name!r}, did you mean {pattern!r} ({model}'s pattern)? (known: ")


# -- skipping files that are not text ----------------------------------------

def test_skip_unreadable_leaves_out_binary_and_broken_files(tmp_path):
    (tmp_path / "a.txt").write_text("low lower lowest\n", encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress("new newer\n".encode()))
    (tmp_path / "d.txt.gz").write_bytes(b"plain, not gzip")
    (tmp_path / "e.txt").write_bytes("caf\u00e9".encode("latin-1"))
    with pytest.raises(ValueError, match="invalid UTF-8"):
        bytepair.train(tmp_path, merges=3, workers=1, progress=False)
    files = Files(tmp_path, skip_unreadable=True)
    assert [p.name for p in files.paths] == ["a.txt", "c.txt.gz"]
    assert [(p.name, why) for p, why in files.skipped] == [
        ("b.bin", "invalid UTF-8 at byte offset 0"),
        ("d.txt.gz", "not a readable gzip file: Not a gzipped file (b'pl')"),
        ("e.txt", "invalid UTF-8 at byte offset 3 (a character cut at the end)"),
    ]
    kept = Files(tmp_path / "a.txt", tmp_path / "c.txt.gz")
    assert bytepair.train(files, merges=5, workers=1, progress=False) == \
        bytepair.train(kept, merges=5, workers=1, progress=False)
    assert Files(tmp_path / "a.txt", skip_unreadable=True).skipped == []


def test_skip_unreadable_with_nothing_readable_is_an_error(tmp_path):
    (tmp_path / "b.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError) as raised:
        Files(tmp_path, skip_unreadable=True)
    assert str(raised.value) == (f"corpus: no file is UTF-8 text (skipped 1: {tmp_path / 'b.bin'}: "
                                 "invalid UTF-8 at byte offset 0, ...)")


@given(st.lists(st.sampled_from([b"a", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff",
                                 b"\xc3", b"\x80", b"\n"]), max_size=40),
       st.integers(1, 7))
def test_unreadable_finds_the_first_bad_byte_across_chunks(tmp_path_factory, parts, chunk):
    data = b"".join(parts)
    path = tmp_path_factory.mktemp("u") / "t.txt"
    path.write_bytes(data)
    try:
        data.decode("utf-8")
        expected = None
    except UnicodeDecodeError as exc:
        expected = exc.start
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(corpus_module, "CHECK_CHUNK", chunk)
        reason = unreadable(path)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(f"invalid UTF-8 at byte offset {expected}")


# -- lines that keep their endings -------------------------------------------

@given(st.lists(st.sampled_from(["a", "b c", "\u00e9", "\r", "\n", "\r\n", "", "  "]), max_size=30))
def test_lines_with_their_endings_join_to_the_file(tmp_path_factory, parts):
    data = "".join(parts).encode("utf-8")
    path = tmp_path_factory.mktemp("l") / "t.txt"
    path.write_bytes(data)
    files = Files(path, per_line=True)
    assert b"".join(files.documents(False, keep_line_ends=True)) == data
    assert "".join(files.documents(True, keep_line_ends=True)) == data.decode("utf-8")
    # Training's lines are the same lines without their endings.
    stripped = [line.removesuffix(b"\n").removesuffix(b"\r") if line.endswith(b"\n") else line
                for line in files.documents(False, keep_line_ends=True)]
    assert stripped == list(files.documents(False))

