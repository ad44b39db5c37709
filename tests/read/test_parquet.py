"""Parquet input: one document per row of a string column, one row group at a time."""

import random
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bytepair
from bytepair.read.corpus import Files, iter_documents, read_file
from helpers import KJV, damaged_parquet, peak_rss_mib


@pytest.fixture(scope="module")
def verses(tmp_path_factory):
    """KJV verses (with some multi-byte text) as lines of a text file."""
    lines = KJV.read_text().splitlines()[:600]
    lines += ["naïve café 東京 — ünïcödé", "", "aaaa aaaa"]
    return lines


def write_parquet(path, columns, row_group_size=None):
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def test_rows_equal_the_same_rows_as_text_lines(tmp_path, verses):
    text = tmp_path / "verses.txt"
    text.write_text("\n".join(verses) + "\n")
    parquet = write_parquet(tmp_path / "verses.parquet", {"text": verses}, row_group_size=97)
    assert list(Files(parquet).documents(text=True)) == verses
    assert list(Files(parquet).documents(text=False)) == [v.encode() for v in verses]
    for pretokenize in ("gpt2", None):
        from_text = bytepair.train(Files(text, per_line=True), merges=60,
                                   pretokenize=pretokenize, workers=1, progress=False)
        from_parquet = bytepair.train(parquet, merges=60, pretokenize=pretokenize,
                                      workers=1, progress=False)
        assert from_parquet == from_text


def test_row_groups_are_the_parts(tmp_path, verses):
    parquet = write_parquet(tmp_path / "v.parquet", {"text": verses}, row_group_size=100)
    files = Files(parquet)
    parts = files.parts(1 << 20)
    assert parts == [(parquet, g, g + 1) for g in range(pq.ParquetFile(parquet).num_row_groups)]
    assert len(parts) == -(-len(verses) // 100)
    # Each part reads its own rows; together they are the file, in order.
    read = [doc for path, start, end in parts for doc in read_file(path, text=True, start=start, end=end)]
    assert read == verses
    assert list(read_file(parquet, text=True, start=2, end=3)) == verses[200:300]


def test_column_choice(tmp_path, verses):
    upper = [v.upper() for v in verses]
    parquet = write_parquet(tmp_path / "two.parquet",
                            {"id": list(range(len(verses))), "text": verses, "body": upper})
    assert list(Files(parquet).documents(text=True)) == verses
    assert list(Files(parquet, text_column="body").documents(text=True)) == upper
    assert list(iter_documents(str(parquet), text=True, text_column="body")) == upper
    assert (bytepair.train(parquet, merges=20, progress=False, workers=1)
            != bytepair.train(Files(parquet, text_column="body"), merges=20, progress=False, workers=1))


def test_large_string_column(tmp_path):
    values = pa.array(["one two", "three"], type=pa.large_string())
    parquet = write_parquet(tmp_path / "large.parquet", {"text": values})
    assert list(Files(parquet).documents(text=False)) == [b"one two", b"three"]


def test_unknown_column_lists_the_columns(tmp_path):
    parquet = write_parquet(tmp_path / "c.parquet", {"content": ["a"], "url": ["u"]})
    with pytest.raises(ValueError, match=r"c\.parquet: no column 'text'; the columns are 'content', 'url'"):
        Files(parquet)


def test_null_row_names_file_column_and_row(tmp_path):
    parquet = write_parquet(tmp_path / "n.parquet", {"text": ["a", "b", "c", None, "e"]},
                            row_group_size=2)
    files = Files(parquet)
    with pytest.raises(ValueError, match=r"n\.parquet: row group 1, row 3: column 'text' is null"):
        list(files.documents(text=True))


def test_non_string_column_is_refused(tmp_path):
    parquet = write_parquet(tmp_path / "i.parquet", {"text": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"i\.parquet: column 'text' holds int64, not strings"):
        Files(parquet)
    binary = write_parquet(tmp_path / "b.parquet", {"text": pa.array([b"x"], type=pa.binary())})
    with pytest.raises(ValueError, match="holds binary, not strings"):
        Files(binary)


@pytest.mark.parametrize("content", [b"", b"just some text\n", b"PAR1" + b"\0" * 20])
def test_a_non_parquet_file_named_parquet_is_refused(tmp_path, content):
    fake = tmp_path / "fake.parquet"
    fake.write_bytes(content)
    with pytest.raises(ValueError, match=r"fake\.parquet: not a Parquet file"):
        Files(fake)


def test_missing_pyarrow_says_how_to_install(tmp_path, monkeypatch):
    parquet = write_parquet(tmp_path / "x.parquet", {"text": ["a"]})
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ImportError, match=r"pip install 'bytepair\[parquet\]'"):
        Files(parquet)


def test_empty_parquet_file_has_no_documents(tmp_path):
    parquet = write_parquet(tmp_path / "e.parquet", {"text": pa.array([], type=pa.string())})
    assert list(Files(parquet).documents(text=True)) == []


@pytest.mark.parametrize("text", [True, False])
def test_a_damaged_page_names_the_file_and_the_row_group(tmp_path, text):
    damaged = damaged_parquet(tmp_path / "d.parquet", groups=6, group=4)
    with pytest.raises(ValueError, match=r"d\.parquet: row group 4") as info:
        bytepair.count(damaged, pretokenize="gpt2" if text else None, workers=1, progress=False)
    assert "\n" not in str(info.value)


def test_invalid_utf8_in_a_string_column_names_the_row(tmp_path):
    good = ["ok", "fine", "also fine"]
    bad = b"caf\xc3"  # é cut short
    values = b"".join(v.encode() for v in good) + bad
    offsets = [0]
    for v in [*good, bad]:
        offsets.append(offsets[-1] + len(v.encode() if isinstance(v, str) else v))
    column = pa.Array.from_buffers(pa.string(), 4, [None, pa.py_buffer(pa.array(offsets, pa.int32()).buffers()[1]),
                                                    pa.py_buffer(values)])
    path = tmp_path / "u.parquet"
    pq.write_table(pa.table({"text": pa.concat_arrays([pa.array(["x"] * 5), column])}), path,
                   row_group_size=4)
    with pytest.raises(ValueError, match=r"u\.parquet: row group 2, row 8: column 'text': invalid "
                                         r"UTF-8 at byte offset 3"):
        list(Files(path).documents(text=True))
    # Byte mode takes any bytes.
    assert list(Files(path).documents(text=False))[-1] == bad


@pytest.mark.slow
def test_memory_does_not_follow_the_row_group_size(tmp_path):
    """Rows are read in record batches: one 30 MB row group peaks about where 30 groups of
    1 MB do (211 MiB against 87 when a row group was read whole; now 105 and 97)."""
    # Distinct rows (no dictionary encoding) over a small vocabulary (a small table).
    pick = random.Random(0)
    words = [f"w{i}x" for i in range(3000)]
    rows = [" ".join(pick.choices(words, k=200)) for _ in range(25000)]
    script = "import sys, bytepair\nbytepair.count(sys.argv[1], workers=1, progress=False)\n"
    peaks = {}
    for groups in (1, 30):
        path = tmp_path / f"g{groups}.parquet"
        pq.write_table(pa.table({"text": rows}), path, row_group_size=-(-len(rows) // groups))
        assert pq.ParquetFile(path).metadata.num_row_groups == groups
        peaks[groups] = peak_rss_mib(script, str(path))
    assert peaks[1] < peaks[30] + 30, peaks
