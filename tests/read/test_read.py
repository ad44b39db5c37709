"""The read stage hands counting documents or blocks; what it yields must be the corpus, whole."""

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import HealthCheck
from hypothesis import strategies as st

from bytepair import Files
from bytepair.read import blocks
from bytepair.read.corpus import Documents, RemoteFile, iter_documents, read_corpus, reads_in_blocks

TEXT = st.text(st.sampled_from("ab \n\r\té語"), max_size=300)


def _write(tmp_path, name, data: bytes):
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(text=TEXT, per_line=st.booleans(), cut=st.booleans(), gz=st.booleans(),
       block=st.sampled_from([1, 3, 16, 1 << 20]))
def test_file_blocks_cover_the_file_in_order(tmp_path, text, per_line, cut, gz, block):
    data = text.encode()
    path = _write(tmp_path, "doc.txt.gz" if gz else "doc.txt", data)
    got = list(blocks.file_blocks(path, 0, None, per_line=per_line, cut_documents=cut,
                                  block_bytes=block))
    assert b"".join(b for _, b, _ in got) == data
    offsets = [offset for offset, _, _ in got]
    assert offsets == [sum(len(b) for _, b, _ in got[:i]) for i in range(len(got))]
    for offset, block_data, _ in got[:-1]:
        end = offset + len(block_data)
        if per_line:
            assert data[end - 1:end] == b"\n"
        elif cut:
            assert blocks.is_cut(data, end)
    if not per_line and not cut:
        assert len(got) == 1  # a whole-file document in byte mode is one piece
    assert sum(p for _, _, p in got) <= path.stat().st_size


@pytest.mark.parametrize("name", ["a.txt", "a.txt.gz", "empty.txt.gz"])
def test_files_blocks_progress_adds_up_to_the_size_on_disk(tmp_path, name):
    data = b"" if name.startswith("empty") else ("one two\nthree four\n" * 500).encode()
    path = _write(tmp_path, name, data)
    other = _write(tmp_path, "b.txt", b"last line\n")
    got = list(Files(path, other, per_line=True).blocks(64, cut_documents=True))
    assert sum(progress for *_, progress in got) == path.stat().st_size + other.stat().st_size
    assert b"".join(data for p, _, data, _ in got if p == path) == data
    assert [p for p, *_ in got] == sorted([p for p, *_ in got], key=[path, other].index)


def test_unreadable_gzip_names_the_file(tmp_path):
    path = tmp_path / "bad.txt.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match=r"bad\.txt\.gz: not a readable gzip file"):
        list(blocks.file_blocks(path, 0, None, per_line=True, cut_documents=True))


def test_what_is_read_in_blocks(tmp_path):
    for name in ("a.txt", "a.txt.gz", "a"):
        assert reads_in_blocks(_write(tmp_path, name, b"x"))
    for name in ("a.jsonl", "a.ndjson.gz", "a.parquet"):
        assert not reads_in_blocks(tmp_path / name)
    assert not reads_in_blocks(RemoteFile("memory://x/a.txt", fs=object(), fs_path="/x/a.txt"))


def test_read_corpus_names_files_or_documents(tmp_path):
    path = _write(tmp_path, "a.txt", b"a\nb\n")
    files = read_corpus(path, per_line=True)
    assert isinstance(files, Files) and list(files.documents(text=True)) == ["a", "b"]
    assert read_corpus(files) is files
    documents = read_corpus(["x", b"y"])
    assert isinstance(documents, Documents) and read_corpus(documents) is documents
    assert list(documents.documents(text=True)) == ["x", "y"]
    assert list(iter_documents(iter(["x", b"y"]), text=False)) == [b"x", b"y"]


@pytest.mark.parametrize(("corpus", "message"), [
    (b"raw", "not bytes"), (7, "got int"), (None, "got NoneType")])
def test_read_corpus_refuses_what_is_no_corpus_at_once(corpus, message):
    with pytest.raises(TypeError, match=message):
        read_corpus(corpus)


def test_documents_name_the_bad_one():
    with pytest.raises(ValueError, match=r"corpus\[1\]: invalid UTF-8 at byte offset 1"):
        list(Documents(["ok", b"a\xff"]).documents(text=True))
    with pytest.raises(TypeError, match=r"corpus\[0\] must be str or bytes, got int"):
        list(Documents([3]).documents(text=False))
