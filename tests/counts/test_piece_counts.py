"""Piece-count tables: arithmetic, the file format, and damaged files."""

import json
import os
import pickle
import re
import zlib
from array import array
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair.split import fastsplit
from bytepair.counts.piece_counts import CountsFormatError, PieceCounts
from bytepair.split.pretokenize import PATTERNS, resolve_pattern, splitter
from helpers import needs_compiled_splitter

GPT2 = PATTERNS["gpt2"]
PieceTable = fastsplit.table if fastsplit.available() else None

pieces = st.binary(min_size=1, max_size=12) | st.sampled_from([b"a", b"aa", b"aaaa", b" the", "é".encode()])
tables = st.dictionaries(pieces, st.integers(1, 2**40), max_size=30)
#: Pieces a pattern cuts are text.
text_pieces = st.text(min_size=1, max_size=6).map(str.encode) | st.sampled_from([b"a", b"aa", b" the"])
text_tables = st.dictionaries(text_pieces, st.integers(1, 2**40), max_size=30)


def counted(documents, pattern="gpt2"):
    """The table of ``documents``, counted piece by piece with the reference splitter."""
    source = resolve_pattern(pattern)
    if source is None:
        counts = Counter(doc.encode() for doc in documents if doc)
    else:
        split = splitter(source)
        counts = Counter(piece.encode() for doc in documents for piece in split(doc))
    return PieceCounts(counts, pattern=pattern)


@given(tables, tables)
def test_sum_adds_counts_piece_by_piece(a, b):
    left, right = PieceCounts(a, pattern="gpt2"), PieceCounts(b, pattern="gpt2")
    total = left + right
    assert dict(total.items()) == dict(Counter(a) + Counter(b))
    assert total == right + left
    assert total.total() == sum(a.values()) + sum(b.values())
    # + copies: the operands are unchanged.
    assert dict(left.items()) == a and dict(right.items()) == b
    left.update(right)
    assert left == total


def test_sum_of_shards_equals_counting_the_union(real_text):
    lines = real_text.decode().splitlines()
    shards = [lines[i::3] for i in range(3)]
    for pattern in ("gpt2", "whitespace", None):
        tables = [counted(shard, pattern) for shard in shards]
        assert sum(tables) == counted(lines, pattern)
        assert tables[0] + tables[1] + tables[2] == counted(lines, pattern)


def test_mixed_patterns_are_refused_naming_both():
    gpt2 = PieceCounts({b"a": 1}, pattern="gpt2")
    words = PieceCounts({b"a": 1}, pattern="whitespace")
    custom = PieceCounts({b"a": 1}, pattern=r"\d+")
    with pytest.raises(ValueError, match="gpt2 and whitespace"):
        gpt2 + words
    with pytest.raises(ValueError, match=r"gpt2 and regex '\\\\d\+'"):
        gpt2.update(custom)
    with pytest.raises(ValueError, match="none and gpt2"):
        sum([PieceCounts(pattern=None), gpt2])
    assert gpt2 == PieceCounts({b"a": 1}, pattern="gpt2")  # unchanged by the failed update


def test_pattern_is_stored_as_its_source():
    assert PieceCounts(pattern="gpt2").pattern == GPT2
    assert PieceCounts(pattern="none").pattern is None
    assert PieceCounts(pattern=None) != PieceCounts(pattern="gpt2")
    with pytest.raises(ValueError, match="pretokenize"):
        PieceCounts(pattern="(")


@pytest.mark.parametrize(("counts", "error", "message"), [
    ({b"": 1}, ValueError, "empty piece"),
    ({b"a": 0}, ValueError, "1..2"),
    ({b"a": -3}, ValueError, "1..2"),
    ({b"a": 2**63}, ValueError, "1..2"),
    ({b"a": 1.5}, TypeError, "must be an int"),
    ({b"a": True}, TypeError, "must be an int"),
    ({7: 1}, TypeError, "bytes or str"),
    ({b"a": 1, "a": 2}, ValueError, "twice"),
    ({b"a": 2**62, b"b": 2**62}, ValueError, "total"),
])
def test_bad_tables_are_refused(counts, error, message):
    with pytest.raises(error, match=message):
        PieceCounts(counts, pattern="gpt2")


def test_total_beyond_64_bits_is_refused_on_update():
    big = PieceCounts({b"a": 2**62}, pattern=None)
    big.update(PieceCounts({b"b": 2**62 - 1}, pattern=None))
    with pytest.raises(ValueError, match="2\\*\\*63"):
        big.update(PieceCounts({b"c": 1}, pattern=None))
    assert big.total() == 2**63 - 1


@given(tables, text_tables, st.sampled_from(["gpt2", None, r"\w+"]))
def test_save_and_load_round_trip(tmp_path_factory, binary, text, pattern):
    counts = binary if pattern is None else text
    path = tmp_path_factory.mktemp("counts") / "t.counts"
    table = PieceCounts(counts, pattern=pattern)
    table.save(path)
    loaded = PieceCounts.load(path, trust_pattern=pattern == r"\w+")
    assert loaded == table
    assert loaded.pattern == table.pattern and loaded.total() == table.total()


def test_equal_tables_give_equal_files(tmp_path, real_text):
    lines = real_text.decode().splitlines()
    forward = counted(lines)
    backward = counted(lines[::-1])
    forward.save(tmp_path / "a")
    backward.save(tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_file_is_compact_and_starts_with_a_readable_header(tmp_path, real_text):
    table = counted(real_text.decode().splitlines())
    table.save(tmp_path / "t.counts")
    data = (tmp_path / "t.counts").read_bytes()
    header = json.loads(data.split(b"\n", 1)[0])
    assert header == {"format": "bytepair-counts", "version": 2, "pattern": GPT2,
                      "pieces": len(table), "piece_bytes": sum(map(len, table)),
                      "total": table.total()}
    # Smaller than the distinct pieces themselves with a newline and a decimal count each.
    assert len(data) < sum(len(p) + 1 + len(str(n)) + 1 for p, n in table.items())


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "t.counts"
    PieceCounts({b"old": 1}, pattern=None).save(path)
    before = path.read_bytes()

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        PieceCounts({b"new": 1}, pattern=None).save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["t.counts"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        PieceCounts(pattern=None).save(tmp_path / "missing" / "t.counts")


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "t.counts"
    PieceCounts({b"low": 5, b" lower": 2, b"\xc3\xa9": 1}, pattern="gpt2").save(path)
    return path


def _rewrite(path, header_changes=None, body=None, *, version=None, copy=True, drop=()):
    """Rewrite a saved file with a changed header (and its copy in the body) or body.

    ``body`` is the raw (uncompressed) table; ``version=1`` writes the old layout,
    ``copy=False`` leaves the old header's copy in the body (a header changed by damage).
    """
    line, rest = path.read_bytes().split(b"\n", 1)
    raw = zlib.decompress(rest)
    old, raw = raw[:len(line) + 1], raw[len(line) + 1:]
    assert old == line + b"\n"  # version 2: the body starts with the header line
    header = json.loads(line)
    header.update(header_changes or {})
    for key in drop:
        del header[key]
    if version is not None:
        header["version"] = version
    new = json.dumps(header).encode() + b"\n"
    raw = raw if body is None else body
    if header["version"] != 1:
        raw = (new if copy else old) + raw
    path.write_bytes(new + zlib.compress(raw))


def _body(lengths, counts, data):
    """A body written independently of the module: byte planes of little-endian integers."""
    raw = b""
    for width, numbers in ((4, lengths), (8, counts)):
        raw += bytes(n.to_bytes(width, "little")[plane] for plane in range(width) for n in numbers)
    return raw + data


@pytest.mark.parametrize(("damage", "message"), [
    (lambda p: p.write_bytes(b""), "not a bytepair piece-count table"),
    (lambda p: p.write_bytes(b"low\t5\n"), "not a bytepair piece-count table"),
    (lambda p: p.write_bytes(b'{"format": "bytepair-model", "version": 1}\n'), "not a bytepair"),
    (lambda p: p.write_bytes(os.urandom(64) * 100), "not a bytepair piece-count table"),
    (lambda p: p.write_bytes(p.read_bytes()[:-3]), "truncated|damaged"),
    (lambda p: p.write_bytes(p.read_bytes() + b"x"), "after the end"),
    (lambda p: _rewrite(p, version=4), "version 4; this bytepair reads up to 3"),
    # Version 3 is a table of sentencepiece words: a byte-level table made version 3 has no rules.
    (lambda p: _rewrite(p, version=3), "version 3 header has no 'sentencepiece' rules"),
    (lambda p: _rewrite(p, {"sentencepiece": {}}), "version 2 header has 'sentencepiece'"),
    (lambda p: _rewrite(p, {"version": "1"}), "invalid format version"),
    (lambda p: _rewrite(p, {"pieces": 4}), "body holds"),
    (lambda p: _rewrite(p, {"pieces": 4}, version=1), "body holds"),
    (lambda p: _rewrite(p, {"pieces": -1}), "non-negative"),
    (lambda p: _rewrite(p, {"total": 9}), "do not add up to 'total'"),
    (lambda p: _rewrite(p, {"total": 2**63}), "'total' 9223372036854775808 exceeds 2\\*\\*63 - 1"),
    (lambda p: _rewrite(p, {"pattern": "("}), "'pattern'.*not a valid regex"),
    (lambda p: _rewrite(p, {"pattern": 3}), "'pattern'"),
    (lambda p: _rewrite(p, drop=["pattern"]), "the header has no 'pattern'"),
    (lambda p: _rewrite(p, {"total": 7}, copy=False), "differs from its checksummed copy"),
    (lambda p: p.write_bytes(p.read_bytes().split(b"\n")[0] + b"\nnot zlib"), "damaged"),
    (lambda p: _rewrite(p, {"pieces": 2, "piece_bytes": 2, "total": 3},
                        _body([1, 1], [1, 2], b"aa")), "twice"),
    (lambda p: _rewrite(p, {"pieces": 2, "piece_bytes": 2, "total": 1},
                        _body([1, 1], [1, 0], b"ab")), "outside"),
    (lambda p: _rewrite(p, {"pieces": 2, "piece_bytes": 2, "total": 2},
                        _body([2, 1], [1, 1], b"ab")), "lengths"),
    (lambda p: _rewrite(p, {"pieces": 2, "piece_bytes": 2, "total": 2},
                        _body([0, 2], [1, 1], b"ab")), "piece #0 is empty"),
    (lambda p: _rewrite(p, {"pieces": 2, "piece_bytes": 3, "total": 4},
                        _body([1, 2], [2, 2], b"a\xc3\xa9")[:-1] + b"\xff"),
     "piece #1 b'.xc3.xff' is not UTF-8"),
    # Valid UTF-8 as a whole, but é cut between two pieces.
    (lambda p: _rewrite(p, {"pieces": 2, "piece_bytes": 2, "total": 2},
                        _body([1, 1], [1, 1], b"\xc3\xa9")), "piece #0 b'.xc3' is not UTF-8"),
])
def test_damaged_files_are_refused_naming_the_file(saved, damage, message):
    damage(saved)
    with pytest.raises(CountsFormatError, match=message) as info:
        PieceCounts.load(saved, trust_pattern=True)
    assert str(saved) in str(info.value)


def test_a_table_that_would_not_load_is_not_saved(tmp_path):
    with pytest.raises(ValueError, match="cannot save the table: piece #0 b'.xff' is not UTF-8"):
        PieceCounts({b"\xff": 1}, pattern="gpt2").save(tmp_path / "t.counts")
    assert not (tmp_path / "t.counts").exists()


def test_pieces_need_not_be_text_without_a_pattern(tmp_path):
    table = PieceCounts({b"\xff": 2, b"\xc3": 1, b"\xa9": 1}, pattern=None)
    table.save(tmp_path / "t.counts")
    assert PieceCounts.load(tmp_path / "t.counts") == table


def test_version_1_files_are_still_read(saved):
    table = PieceCounts.load(saved)
    _rewrite(saved, version=1)
    assert json.loads(saved.read_bytes().split(b"\n")[0])["version"] == 1
    assert PieceCounts.load(saved) == table


def test_every_single_bit_flip_of_the_header_is_refused(saved):
    """The header is checksummed: no flipped bit reads as a valid table (a changed pattern,
    a changed total, ...). Flips in the body are covered by zlib's own checksum."""
    data = saved.read_bytes()
    header_bytes = data.index(b"\n") + 1
    for bit in range(8 * header_bytes):
        damaged = bytearray(data)
        damaged[bit // 8] ^= 1 << (bit % 8)
        saved.write_bytes(damaged)
        with pytest.raises(CountsFormatError, match=re.escape(str(saved))):
            PieceCounts.load(saved, trust_pattern=True)


def test_a_custom_pattern_needs_trust(tmp_path):
    table = PieceCounts({b"aaab": 1}, pattern="(a|aa)+b")
    table.save(tmp_path / "t.counts")
    with pytest.raises(CountsFormatError, match="holds a custom regex pattern .*pass trust_pattern=True"):
        PieceCounts.load(tmp_path / "t.counts")
    assert PieceCounts.load(tmp_path / "t.counts", trust_pattern=True) == table


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", "whitespace", None])
def test_named_patterns_need_no_trust(tmp_path, pattern):
    table = PieceCounts({"ab": 1}, pattern=pattern)
    table.save(tmp_path / "t.counts")
    assert PieceCounts.load(tmp_path / "t.counts") == table


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        PieceCounts.load(tmp_path / "nothing.counts")


def test_mapping_view_and_most_common():
    table = PieceCounts({"b": 2, "a": 2, "c": 5}, pattern=None)
    assert table.most_common(2) == [(b"c", 5), (b"a", 2)]
    assert sorted(table) == [b"a", b"b", b"c"]
    assert b"a" in table and b"z" not in table
    assert table.get(b"z", 0) == 0
    assert "pieces=3 total=9" in repr(table)


def test_a_plain_word_pattern_survives_the_file(tmp_path):
    import regex

    import bytepair

    # "ab" given as a compiled pattern is a regex, though the bare string would be refused.
    table = bytepair.count(["ab abab"], pretokenize=regex.compile("ab"), progress=False)
    table.save(tmp_path / "t.counts")
    loaded = PieceCounts.load(tmp_path / "t.counts")
    assert loaded == table and loaded.pattern == "ab"
    assert (bytepair.train(loaded, merges=2, pretokenize=regex.compile("ab"), progress=False)
            == bytepair.train(["ab abab"], merges=2, pretokenize=regex.compile("ab"), workers=1,
                              progress=False))


def flat_table(counts: dict, pattern="gpt2") -> PieceCounts:
    """A table as compiled counting makes it: flat arrays, no dict yet."""
    table = PieceTable()
    for piece, count in counts.items():
        for _ in range(count):
            table.count(piece, None)
    return PieceCounts.trusted_arrays(*table.arrays(), resolve_pattern(pattern))


@needs_compiled_splitter
@given(st.dictionaries(pieces, st.integers(1, 3), max_size=30), tables)
def test_a_flat_table_behaves_as_the_dict_table(counts, other):
    flat = flat_table(counts)
    same = PieceCounts(counts, pattern="gpt2")
    assert len(flat) == len(counts) and flat.total() == same.total()
    data, starts, weights = flat.flat()
    assert sorted(zip((data[a:b] for a, b in zip(starts, starts[1:])), weights)) == sorted(counts.items())
    assert flat == same and dict(flat) == counts
    assert pickle.loads(pickle.dumps(flat)) == same
    # Adding to a flat table leaves no stale arrays behind.
    flat = flat_table(counts)
    flat.update(PieceCounts(other, pattern="gpt2"))
    expected = dict(Counter(counts) + Counter(other))
    data, starts, weights = flat.flat()
    assert dict(zip((data[a:b] for a, b in zip(starts, starts[1:])), weights)) == expected
    assert dict(flat) == expected and flat.total() == sum(expected.values())


@needs_compiled_splitter
def test_training_reads_the_counted_arrays_without_a_dict(real_text):
    counts = bytepair.count(real_text[:20_000].decode().splitlines(), pretokenize="cl100k")
    assert counts._dict is None  # counted in compiled code: flat arrays only
    tok = bytepair.train(counts, merges=50, pretokenize="cl100k")
    assert counts._dict is None
    assert tok == bytepair.train(PieceCounts(dict(counts), pattern="cl100k"), merges=50,
                                 pretokenize="cl100k")


#: Pieces over a few byte values: prefixes of one another, zero bytes (which sort like the
#: padding of the compiled sort's 8-byte prefixes), and pieces longer than that prefix.
_PIECES = st.lists(st.sampled_from([0, 1, 97, 98, 255]), min_size=1, max_size=12).map(bytes)


@given(st.dictionaries(_PIECES, st.integers(1, 2**40), max_size=40), st.randoms())
def test_a_table_of_flat_arrays_saves_the_file_its_dict_saves(tmp_path_factory, table, rng):
    # Counting hands over flat arrays in its hash order; saving sorts them in compiled code.
    order = list(table)
    rng.shuffle(order)
    data = b"".join(order)
    starts = array("q", [0])
    for piece in order:
        starts.append(starts[-1] + len(piece))
    flat = PieceCounts.trusted_arrays(data, starts, array("q", map(table.get, order)), None)
    folder = tmp_path_factory.mktemp("save")
    flat.save(folder / "flat.counts")
    PieceCounts(table, pattern=None).save(folder / "dict.counts")
    assert (folder / "flat.counts").read_bytes() == (folder / "dict.counts").read_bytes()
    assert dict(PieceCounts.load(folder / "flat.counts")) == table
