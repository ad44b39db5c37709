"""Corpus files named by fsspec URLs read exactly like local files."""

import gzip
import json
import pickle
import uuid

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bytepair
from bytepair.counts import counting
from bytepair.read.corpus import Files, RemoteFile, read_file
from bytepair.split.pretokenize import PATTERNS
from helpers import needs_compiled_splitter


@pytest.fixture
def lines(real_text):
    return real_text.decode().splitlines()[:400]


@pytest.fixture
def memory_dir():
    """A fresh directory on fsspec's in-memory file system, removed afterwards."""
    root = f"/bytepair-test-{uuid.uuid4().hex}"
    fs = fsspec.filesystem("memory")
    fs.mkdir(root)
    yield fs, root
    fs.rm(root, recursive=True)


def test_text_jsonl_gzip_and_parquet_over_memory_urls(memory_dir, lines, tmp_path):
    fs, root = memory_dir
    text = "\n".join(lines) + "\n"
    fs.pipe(f"{root}/a.txt", text.encode())
    fs.pipe(f"{root}/b.txt.gz", gzip.compress(text.encode()))
    fs.pipe(f"{root}/c.jsonl", "".join(json.dumps({"text": t}) + "\n" for t in lines).encode())
    local = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": lines}), local, row_group_size=50)
    fs.pipe(f"{root}/d.parquet", local.read_bytes())
    fs.pipe(f"{root}/.hidden", b"not read")

    files = Files(f"memory://{root}", per_line=True)
    assert [f.name for f in files.paths] == ["a.txt", "b.txt.gz", "c.jsonl", "d.parquet"]
    assert list(files.documents(text=True)) == lines * 4
    assert files.total_bytes() == sum(fs.size(f"{root}/{f.name}") for f in files.paths)
    assert files.row_groups(files.paths[3]) == 8
    # Small parts: byte ranges at line ends, and row groups, read back in order.
    parts = files.parts(1000)
    assert len(parts) > 20
    read = [doc for path, start, end in parts
            for doc in read_file(str(path), text=True, per_line=True, start=start, end=end)]
    assert read == lines * 4


def test_globs_and_missing_urls(memory_dir):
    fs, root = memory_dir
    fs.pipe(f"{root}/x/1.txt", b"one")
    fs.pipe(f"{root}/x/2.txt", b"two")
    fs.pipe(f"{root}/y.md", b"three")
    assert list(Files(f"memory://{root}/*/*.txt").documents(text=True)) == ["one", "two"]
    with pytest.raises(FileNotFoundError, match="no such file"):
        Files(f"memory://{root}/nothing.txt")
    with pytest.raises(FileNotFoundError, match="matches no file"):
        Files(f"memory://{root}/*.csv")


def test_file_urls_equal_paths_and_pickle_as_urls(tmp_path, lines):
    path = tmp_path / "a.txt"
    path.write_text("\n".join(lines))
    remote = Files(path.as_uri(), per_line=True)
    assert list(remote.documents(text=True)) == list(Files(path, per_line=True).documents(text=True))
    copy = pickle.loads(pickle.dumps(remote.paths[0]))
    assert isinstance(copy, RemoteFile) and copy == remote.paths[0]
    assert str(copy) == path.as_uri()


def test_worker_processes_count_urls(memory_dir, lines, tmp_path, monkeypatch):
    fs, root = memory_dir
    text = ("\n".join(lines) + "\n").encode()
    fs.pipe(f"{root}/a.txt", text)
    (tmp_path / "a.txt").write_bytes(text)
    monkeypatch.setattr(counting, "PART_BYTES", 4096)
    # Forked workers inherit the in-memory file system and open the URL themselves.
    for pretokenize in ("whitespace", "gpt2"):
        assert (bytepair.count(f"memory://{root}/a.txt", per_line=True, workers=2,
                               pretokenize=pretokenize, progress=False)
                == bytepair.count(tmp_path / "a.txt", per_line=True, workers=1,
                                  pretokenize=pretokenize, progress=False))


# Cut points exist only for the compiled scanners (docs/design.md 4.3.1).
@needs_compiled_splitter
def test_a_whole_file_url_cut_into_parts_counts_as_one_document(memory_dir, lines, tmp_path):

    fs, root = memory_dir
    text = ("\n".join(lines) + "\n").encode()
    fs.pipe(f"{root}/a.txt", text)
    (tmp_path / "a.txt").write_bytes(text)
    remote = Files(f"memory://{root}/a.txt")
    for name in ("whitespace", "gpt2", "cl100k"):
        cut = bool(counting.compiled_counter(PATTERNS[name]))
        parts = remote.parts(4096, cut_documents=cut)
        assert len(parts) > 1
        # Each part is read only up to its end: the parts add up to the whole document.
        assert sum(len(d) for p, s, e in parts
                   for d in read_file(p, text=False, start=s, end=e)) == len(text)
        expected = counting.count_documents([text.decode()], PATTERNS[name])
        assert dict(counting.count_files(remote, PATTERNS[name], workers=2,
                                         part_bytes=4096)) == expected
        assert dict(counting.count_files(Files(tmp_path / "a.txt"), PATTERNS[name], workers=2,
                                         part_bytes=4096)) == expected
