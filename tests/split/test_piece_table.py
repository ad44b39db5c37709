"""Compiled block counting must equal counting the regex module's pieces document by document."""

import pickle
from array import array
from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import example, given
from hypothesis import strategies as st

from bytepair.split import fastsplit
from bytepair.split.pretokenize import PATTERNS, splitter

pytestmark = pytest.mark.skipif(not fastsplit.available(), reason="compiled splitter not installed")
if fastsplit.available():
    from bytepair.split._split import InvalidUTF8, PieceTable, utf8_error_offset

DATA = Path(__file__).parents[1] / "data"
NAMES = ["gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "nanochat"]
SPLITTERS = {name: splitter(PATTERNS[name]) for name in NAMES}

# Text full of pattern boundaries: CR/LF mixtures, apostrophes, digits,
# mixed-case letters, marks, multi-byte characters.
ALPHABET = list(" \t\r\n\r\n\xa0'sSlLdD0123٣aZé日\u0301!/😀")
DOCUMENT = st.text(st.sampled_from(ALPHABET), max_size=30)


def regex_counts(documents, name):
    """Counter of piece bytes over the documents, with the regex module."""
    counts = Counter()
    for doc in documents:
        if name is None:
            if doc:
                counts[doc.encode("utf-8")] += 1
        else:
            counts.update(piece.encode("utf-8") for piece in SPLITTERS[name](doc))
    return counts


def counted(data, name, **options):
    table = PieceTable()
    table.count(data, name, **options)
    return table.items()


@pytest.mark.parametrize("name", NAMES + [None])
@given(documents=st.lists(DOCUMENT, max_size=8))
@example(documents=["", "a", "", "a"])
def test_per_line_counts_equal_regex(name, documents):
    # Each document one line (a lone "\r" inside or at its end stays part of
    # it); mixed "\n" and "\r\n" endings; no ending on the last line sometimes.
    clean = [doc.replace("\n", "") for doc in documents]
    endings = ["\r\n" if doc.endswith("\r") or i % 2 else "\n" for i, doc in enumerate(clean)]
    if clean and len(clean) % 3 == 0:
        endings[-1] = ""
    data = "".join(doc + end for doc, end in zip(clean, endings))
    assert counted(data.encode(), name, per_line=True) == regex_counts(clean, name)


@pytest.mark.parametrize("name", NAMES + [None])
@given(documents=st.lists(DOCUMENT, max_size=8))
def test_offset_counts_equal_regex(name, documents):
    data = b"".join(doc.encode() for doc in documents)
    bounds, at = array("q"), 0
    for doc in documents:
        size = len(doc.encode())
        bounds.extend((at, at + size))
        at += size
    assert counted(data, name, offsets=bounds) == regex_counts(documents, name)


@pytest.mark.parametrize("name", NAMES + [None])
@given(document=DOCUMENT)
def test_whole_buffer_counts_equal_regex(name, document):
    assert counted(document.encode(), name) == regex_counts([document], name)


def test_only_one_line_ending_is_stripped():
    # "\r\r\n" keeps one "\r"; a lone "\r" at the end of the buffer stays.
    table = PieceTable()
    table.count(b"a\r\r\nb\n\nc\r", None, per_line=True)
    assert table.items() == {b"a\r": 1, b"b": 1, b"c\r": 1}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("file", ["multilingual-sample.txt", "debian-non-english-sample.txt"])
def test_counts_on_multilingual_text(name, file):
    text = (DATA / file).read_text("utf-8")
    lines = text.split("\n")
    assert counted(text.encode(), name, per_line=True) == regex_counts(lines, name)
    assert counted(text.encode(), name) == regex_counts([text], name)


@pytest.mark.parametrize("name", NAMES)
def test_counts_on_real_text(name, real_text):
    lines = real_text.decode("utf-8").split("\n")
    table = PieceTable()
    table.count(real_text, name, per_line=True)
    assert table.items() == regex_counts(lines, name)
    assert len(table) == len(table.items()) > 1000


def pythons_first_bad_offset(data: bytes) -> int:
    """Where Python's UTF-8 decoder finds the first bad byte, or -1."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return -1


@given(st.binary(max_size=40), st.binary(max_size=8))
@example(b"ab", b"\xed\xa0\x80")      # a surrogate
@example(b"", b"\xf4\x90\x80\x80")     # past U+10FFFF
@example(b"abc", b"\xe2\x82")          # cut short at the end
@example(b"", b"\xc0\xaf")             # overlong
@example(b"abcdefghijklmnop", b"\xff")
def test_invalid_utf8_offset_equals_python(prefix, tail):
    data = prefix + tail
    want = pythons_first_bad_offset(data)
    assert utf8_error_offset(data) == want
    for options in ({}, {"per_line": True}, {"offsets": array("q", [0, len(data)])}):
        table = PieceTable()
        if want < 0:
            table.count(data, "gpt2", **options)
        else:
            with pytest.raises(InvalidUTF8) as info:
                table.count(data, "gpt2", **options)
            assert info.value.offset == want


@given(st.lists(st.binary(max_size=12), min_size=1, max_size=6))
def test_invalid_utf8_offset_in_later_line(lines):
    # The reported offset is from the start of the buffer, in the first bad line.
    data = b"\n".join(lines)
    want, at = -1, 0
    for line in lines:
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            want = at + exc.start
            break
        at += len(line) + 1
    table = PieceTable()
    if want < 0:
        table.count(data, "cl100k", per_line=True)
    else:
        with pytest.raises(InvalidUTF8) as info:
            table.count(data, "cl100k", per_line=True)
        assert info.value.offset == want


def test_no_split_accepts_any_bytes():
    table = PieceTable()
    table.count(b"\xff\xfe\nok\n", None, per_line=True)
    assert table.items() == {b"\xff\xfe": 1, b"ok": 1}


@given(st.lists(st.binary(max_size=40), max_size=60), st.lists(st.binary(max_size=40), max_size=60))
def test_merge_pickle_and_long_keys(first, second):
    # Keys of every length (inline up to 16 bytes, in the arena beyond) survive
    # growth, merging and pickling.
    a, b = PieceTable(), PieceTable()
    for key in first:
        a.count(key, None)
    for key in second:
        b.count(key, None)
    a.merge(b)
    assert a.items() == Counter(k for k in first + second if k)
    assert pickle.loads(pickle.dumps(a)).items() == a.items()


def test_many_distinct_pieces_survive_growth():
    words = [f"w{i}x{'y' * (i % 23)}" for i in range(50_000)]
    data = "\n".join(words * 2).encode()
    table = PieceTable()
    table.count(data, None, per_line=True)
    assert table.items() == {w.encode(): 2 for w in words}


def test_bad_arguments_are_refused():
    table = PieceTable()
    with pytest.raises(ValueError, match="pattern must be None or one of"):
        table.count(b"x", "gpt5")
    with pytest.raises(ValueError, match="per_line or offsets"):
        table.count(b"x", "gpt2", per_line=True, offsets=array("q", [0, 1]))
    with pytest.raises(ValueError, match="offsets must hold"):
        table.count(b"x", "gpt2", offsets=array("q", [0]))
    with pytest.raises(ValueError, match="outside"):
        table.count(b"x", "gpt2", offsets=array("q", [0, 2]))
    with pytest.raises(TypeError, match="data must be a contiguous bytes-like"):
        table.count("text", "gpt2")
    assert len(table) == 0


def test_offsets_as_pairs():
    table = PieceTable()
    table.count(b"one two", "gpt2", offsets=[(0, 3), (3, 7), (2, 2)])
    assert table.items() == {b"one": 1, b" two": 1}


def test_count_documents_from_str():
    docs = ["don't STOP", "", "x\ud800y", "日本語 text"]
    assert fastsplit.count(docs, "o200k") == Counter(
        p.encode("utf-8", "surrogatepass") for d in docs for p in regex.findall(PATTERNS["o200k"], d))
    assert fastsplit.count(docs, None) == Counter(d.encode("utf-8", "surrogatepass") for d in docs if d)


# Valid text of one-, two-, three- and four-byte characters in runs (so that the
# eight-byte steps of the validator start and stop anywhere), then one byte
# changed, cut off or put in: the first bad offset must be Python's.
MIXED = st.lists(st.sampled_from(["a", "word ", "  ", "é", "жж", "Ωμ", "ب", "中文", "€", "😀", "\u0800",
                                  "\U00010000", "\U0010ffff", "\ud7ff", "\ue000"]),
                 max_size=40).map("".join)


@given(MIXED, st.integers(0, 400), st.sampled_from(["replace", "insert", "cut", "none"]),
       st.integers(0, 255))
@example("жжжжжжжжжж", 9, "replace", 0xC1)   # an overlong lead inside two-byte text
@example("жжжжжжжжжж", 8, "replace", 0x41)   # a lead without its continuation byte
def test_invalid_utf8_offset_equals_python_on_mixed_text(text, at, change, byte):
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    at = min(at, len(data))
    if change == "replace" and at < len(data):
        data[at] = byte
    elif change == "insert":
        data[at:at] = bytes([byte])
    elif change == "cut":
        del data[at:]
    data = bytes(data)
    assert utf8_error_offset(data) == pythons_first_bad_offset(data)


@pytest.mark.parametrize("tables", [1, 2, 3])
def test_merged_arrays_on_two_threads_sum_what_one_thread_sums(tables):
    # Tables large enough to be read as two halves on two threads (65,536 slots
    # and more), overlapping, with short keys and keys past 16 bytes.
    import random

    rng = random.Random(tables)
    words = [bytes(rng.choice(b"abcdefgh") for _ in range(rng.choice([3, 5, 9, 17, 30])))
             for _ in range(60_000)]
    texts = [b" ".join(rng.choice(words) for _ in range(40_000)) for _ in range(tables)]

    def made():
        made = []
        for text in texts:
            table = PieceTable()
            table.count(text, "whitespace-split")
            made.append(table)
        return made

    assert max(len(table) for table in made()) > 20_000
    expected = Counter()
    for table in made():
        expected.update(table.items())
    for threads in (1, 2, 4):
        data, starts, counts = fastsplit.merged_arrays(made(), threads)
        got = {data[i:j]: n for i, j, n in zip(starts, starts[1:], counts)}
        assert len(got) == len(counts) and got == dict(expected)
