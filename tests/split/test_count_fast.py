"""The fast paths of compiled counting give exactly the regex's pieces and counts.

The scanners take a shortcut for words of ASCII letters (eight bytes at a
time), so these inputs put letter runs of every length next to every other
kind of character: ASCII bytes of every class, letters and marks outside
ASCII that continue a run, apostrophes, digits, white space.
"""

from collections import Counter

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bytepair.split import fastsplit
from bytepair.split.pretokenize import PATTERNS, splitter

pytestmark = pytest.mark.skipif(not fastsplit.available(), reason="compiled splitter not installed")
if fastsplit.available():
    from bytepair.split import _split

NAMES = ["gpt2", "cl100k", "o200k", "whitespace", "whitespace-split", "nanochat", "superbpe"]
ISOLATED = ("whitespace", "whitespace-split", "superbpe")
ASCII = "".join(map(chr, range(128)))


def expected(name, text):
    if name in ISOLATED:
        return splitter(PATTERNS[name])(text)
    return regex.findall(PATTERNS[name], text)


# Words of ASCII letters, short and long (the 8-byte steps and the byte tail),
# glued to what may or may not continue them.
WORDS = st.text(st.sampled_from("abcXYZ"), min_size=1, max_size=20)
GLUE = st.one_of(
    st.sampled_from(ASCII),
    st.sampled_from(["é", "ß", "ǅ", "日", "\u0301", "ʰ", "٣", "\u00a0", "'s", "'LL", " '", "  ", "\r\n"]),
    # o200k decides a word of ASCII capitals then small letters without decoding,
    # up to the first character that is not ASCII: these may go on with it or not.
    st.sampled_from(["É", "éA", "\u0301a", "Ǆ", "😀", "👍🏽", "\x00a", "\ra", "\t'S", "-X", "1", "1234", " 12a"]),
)
TEXTS = st.lists(st.one_of(WORDS, GLUE), max_size=30).map("".join)


@pytest.mark.parametrize("name", NAMES)
@given(text=TEXTS)
def test_split_of_ascii_words_equals_regex(name, text):
    assert fastsplit.split(text, name) == expected(name, text)


@pytest.mark.parametrize("name", NAMES)
def test_every_ascii_character_at_every_place_in_a_word(name):
    # The 8-byte letter test against each ASCII character at each of 16 places,
    # with and without a space before the word, and with a letter outside ASCII after.
    for char in ASCII:
        for before in range(16):
            for lead, tail in (("", ""), (" ", ""), ("x ", "é"), (" ", "日b")):
                text = lead + "q" * before + char + "w" * (15 - before) + tail
                assert fastsplit.split(text, name) == expected(name, text), repr(text)


@given(lines=st.lists(TEXTS, max_size=8))
def test_table_counts_equal_regex_counts_per_line(lines):
    text = "\n".join(lines)
    table = _split.PieceTable()
    table.count(text.encode("utf-8"), "gpt2", per_line=True)
    # Documents as per_line cuts them: at "\n", less one "\r" before it (the last
    # line, with no "\n" after it, keeps a "\r" it ends with).
    *ended, last = text.split("\n")
    documents = [line[:-1] if line.endswith("\r") else line for line in ended] + [last]
    want = Counter(piece.encode("utf-8") for doc in documents for piece in expected("gpt2", doc))
    assert table.items() == dict(want)


def _table(documents):
    table = _split.PieceTable()
    for doc in documents:
        table.add_text(doc, "gpt2")
    return table


def _as_dict(arrays):
    data, starts, counts = arrays
    assert len(starts) == len(counts) + 1 and starts[0] == 0 and starts[-1] == len(data)
    pieces = [data[a:b] for a, b in zip(starts, starts[1:])]
    assert len(set(pieces)) == len(pieces)  # each piece written once
    return dict(zip(pieces, counts))


# Short and long pieces (past the 16 bytes a slot holds), repeated and shared between tables.
DOCS = st.lists(st.text(st.sampled_from("ab é\n"), max_size=40), max_size=6)


@given(shards=st.lists(DOCS, min_size=1, max_size=4))
def test_merged_arrays_equal_the_sum_of_the_tables(shards):
    tables = [_table(docs) for docs in shards]
    want = Counter()
    for table in tables:
        want.update(table.items())
    assert _as_dict(_split.merged_arrays(tables)) == dict(want)
    assert [len(table) for table in tables] == [0] * len(tables)
    tables[0].add_text("still usable", "gpt2")
    assert tables[0].items() == {b"still": 1, b" usable": 1}


@pytest.mark.parametrize("threads", [1, 2])
def test_merged_arrays_of_large_tables_released_as_read(threads):
    # Tables of more than 2 MiB of slots give their pages back while being read,
    # by both threads (each its own half) when there are two.
    a = _table(f"w{i} x{i % 7}" for i in range(0, 120_000))
    b = _table(f"w{i} y{'z' * (i % 30)}" for i in range(60_000, 200_000))
    want = Counter(a.items())
    want.update(b.items())
    assert _as_dict(_split.merged_arrays([a, b, _split.PieceTable()], threads)) == dict(want)
    assert len(a) == len(b) == 0


@pytest.mark.parametrize("threads", [1, 2])
def test_merged_arrays_of_no_tables_is_empty(threads):
    data, starts, counts = _split.merged_arrays([], threads)
    assert (data, list(starts), list(counts)) == (b"", [0], [])


def test_merged_arrays_refuses_what_is_not_a_table_before_emptying_any():
    table = _table(["a b"])
    with pytest.raises(TypeError):
        _split.merged_arrays([table, {}])
    assert len(table) == 2


def test_a_table_doubled_in_place_finds_every_piece_again():
    # Growing from 1024 slots to 2**20 moves every slot in place, many times over,
    # with runs that wrap around the end of the table. A piece that could not be
    # found again after a doubling would be added a second time: the size would
    # pass the number of distinct pieces and the counts would be split.
    table = _split.PieceTable()
    pieces = [f"p{i}".encode() * (1 + i % 9) for i in range(400_000)]  # short and long keys
    for _ in range(2):
        for piece in pieces:
            table.count(piece, None)
    assert len(table) == len(pieces)
    assert table.items() == dict.fromkeys(pieces, 2)


@given(documents=st.lists(st.text(st.sampled_from("ab \u00e9"), max_size=12), max_size=300))
def test_growing_tables_count_like_a_counter(documents):
    table = _split.PieceTable()
    for doc in documents + documents:
        table.add_text(doc, "gpt2")
    want = Counter(piece.encode() for doc in documents + documents for piece in expected("gpt2", doc))
    assert table.items() == dict(want)


# Pieces of every length around the 16 bytes a slot holds, many distinct
# ones, so the table doubles several times while the frequent ones are
# counted in their home slots (the inline path) and the rest probe on.
LONG_WORDS = st.text(st.sampled_from("ab"), min_size=1, max_size=24)


@given(documents=st.lists(st.lists(LONG_WORDS, max_size=8).map(" ".join), max_size=200))
def test_counts_of_short_and_long_pieces_through_growth(documents):
    table = _split.PieceTable()
    # 3,000 distinct words (digits spelt as letters) double the table past its 1,024 slots.
    distinct = ["".join(chr(ord("c") + int(d)) for d in str(i)).encode() for i in range(3000)]
    table.count(b"\n".join(distinct), "gpt2", per_line=True)
    data = "\n".join(documents + documents).encode()
    table.count(data, "cl100k", per_line=True)
    want = Counter(dict.fromkeys(distinct, 1))
    want.update(piece.encode() for doc in documents + documents for piece in expected("cl100k", doc))
    assert table.items() == dict(want)
