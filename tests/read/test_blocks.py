"""Block reading: cut points keep every named pattern's pieces; streamed counting equals in-memory."""

import gzip
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.read import blocks
from bytepair.counts import counting
from bytepair.read.corpus import Files, read_file
from bytepair.split.pretokenize import PATTERNS, splitter
from helpers import examples, needs_compiled_splitter

NAMES = list(blocks.CUTTABLE)

# Text built to sit on every rule's edge: letters of several scripts before
# spaces and newlines, white space runs of every kind, CR/LF mixtures, marks,
# digits, apostrophes, symbols and multi-byte characters.
PARTS = st.sampled_from([
    "a", "Z", "é", "ж", "Я", "日", "\u0301", "1", "٣", "'", "'s", "'LL", " ", "  ", "\t",
    "\n", "\r\n", "\r", "\n\n", " \n", "\u00a0", "\u3000", "\u2028", ".", "!?", "/", "€",
    "word", " word", "\nWord", "x\n", "-\n", "ab cd", "😀",
])
TEXTS = st.lists(PARTS, max_size=40).map("".join)


def pieces(name: str, text: str) -> list[str]:
    return splitter(PATTERNS[name])(text)


@pytest.mark.parametrize("name", NAMES)
@given(text=TEXTS)
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_cut_point_keeps_the_regex_pieces(name, text):
    # The rule is checked against the regex module itself, not the compiled scanners.
    data = text.encode()
    whole = pieces(name, text)
    for c in range(1, len(data)):
        if blocks.is_cut(data, c):
            head, tail = data[:c].decode(), data[c:].decode()
            assert pieces(name, head) + pieces(name, tail) == whole, (c, head, tail)


def test_cut_rules_on_plain_examples():
    text = "one two\nThree\n\nfour  five\n six"
    data = text.encode()
    cuts = [c for c in range(len(data)) if blocks.is_cut(data, c)]
    # S: "one| two", "four|  five"; N: "two\n|Three". Not after "\n\n", not before " six".
    assert cuts == [3, 8, text.index("  five")]
    assert blocks.last_cut(data, 0, len(data)) == cuts[-1]
    assert blocks.first_cut(data, 0) == cuts[0]
    assert blocks.last_cut(b"     \n\n\n   ", 0, 11) == -1
    # A letter of any script before a space, and after a newline.
    assert blocks.is_cut("жж ж".encode(), 4) and blocks.is_cut("。\nЖ".encode(), 4)
    assert not blocks.is_cut("1 2".encode(), 1) and not blocks.is_cut("\u3000\nЖ".encode(), 4)


def _count_streamed(tmp_path, monkeypatch, data: bytes, name, *, block: int, per_line=False,
                    suffix=".txt"):
    monkeypatch.setattr(blocks, "BLOCK_BYTES", block)
    path = tmp_path / f"doc{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    source = PATTERNS[name] if name else None
    return counting.count_part(path, 0, None, source, per_line=per_line)


def _in_memory(data: bytes, name, per_line=False) -> Counter:
    source = PATTERNS[name] if name else None
    documents = data.split(b"\n") if per_line else [data]
    if per_line:
        # One "\r" goes with the "\n" after it; the last line has none.
        documents = [d[:-1] if d.endswith(b"\r") else d for d in documents[:-1]] + documents[-1:]
    if source is None:
        return Counter(d for d in documents if d)
    return counting.count_documents([d.decode() for d in documents], source)


ADVERSARIAL = [
    "no newline at all, only words and spaces " * 40,
    "x" + " " * 3000 + "y" + "\t \u00a0" * 500 + "z",
    "line\r\nline\r\n" * 300 + "end\r",
    "Ünïcödé ворд 日本語のテキスト 😀😀 " * 200,
    "\n" * 2000 + "a\n" * 500,
    "word" * 2000,
]


@needs_compiled_splitter
@pytest.mark.parametrize("name", NAMES + [None])
@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
@pytest.mark.parametrize("block", [7, 64, 1000])
def test_streamed_whole_file_equals_in_memory_on_adversarial_text(tmp_path, monkeypatch, name,
                                                                   text, block):
    data = text.encode()
    assert _count_streamed(tmp_path, monkeypatch, data, name, block=block) == _in_memory(data, name)


@needs_compiled_splitter
@pytest.mark.parametrize("name", NAMES)
@given(text=TEXTS, block=st.integers(1, 40))
@settings(max_examples=examples(150), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_streamed_whole_file_equals_in_memory(tmp_path, monkeypatch, name, text, block):
    data = (text * 3).encode()
    assert _count_streamed(tmp_path, monkeypatch, data, name, block=block) == _in_memory(data, name)
    assert _count_streamed(tmp_path, monkeypatch, data, name, block=block, per_line=True) == \
        _in_memory(data, name, per_line=True)


@needs_compiled_splitter
@pytest.mark.parametrize("name", ["gpt2", "o200k"])
def test_streamed_real_text_in_many_blocks(tmp_path, monkeypatch, real_text, name):
    data = real_text[:200_000] + "\nЖили-были дед да баба. 日本語。\n".encode() * 50
    got = _count_streamed(tmp_path, monkeypatch, data, name, block=4096)
    assert got == _in_memory(data, name)
    assert _count_streamed(tmp_path, monkeypatch, data, name, block=4096, suffix=".txt.gz") == got


@needs_compiled_splitter
@pytest.mark.parametrize("per_line", [False, True])
@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_invalid_utf8_across_a_block_boundary_names_file_and_offset(tmp_path, monkeypatch, per_line,
                                                                    suffix):
    # "ж" is D0 B6; the D0 is the last byte of the first 4096-byte read, and B6 is replaced.
    head = b"word " * 819 + b"a"  # 4096 bytes
    data = head[:-1] + b"\xd0" + b"\x41 and more words\n" * 400
    with pytest.raises(ValueError, match=rf"doc\.txt(\.gz)?: invalid UTF-8 at byte offset 4095\b"):
        _count_streamed(tmp_path, monkeypatch, data, "cl100k", block=4096, per_line=per_line,
                        suffix=suffix)


@pytest.mark.parametrize("name", ["gpt2", None])
def test_one_line_ending_is_stripped_and_a_lone_cr_kept(tmp_path, monkeypatch, name):
    data = b"ab\ncd\r\nef\r\r\ngh\r"
    path = tmp_path / "lines.txt"
    path.write_bytes(data)
    assert list(read_file(path, text=False, per_line=True)) == [b"ab", b"cd", b"ef\r", b"gh\r"]
    expected = _in_memory(data, name, per_line=True)
    assert _count_streamed(tmp_path, monkeypatch, data, name, block=3, per_line=True) == expected
    if name:
        assert expected[b"\r"] == 2  # "ef\r" and "gh\r": the lone CRs are text


@needs_compiled_splitter
@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_whole_file_parts_any_number_of_workers_give_one_model(tmp_path, monkeypatch, real_text, name):
    # One big whole-file document, cut into parts at cut points and spread over workers.
    path = tmp_path / "book.txt"
    path.write_bytes(real_text[:120_000])
    parts = Files(path).parts(5000, cut_documents=True)
    assert len(parts) > 15
    for (_, _, end), (_, start, _) in zip(parts, parts[1:]):
        assert end == start and blocks.is_cut(real_text, end)
    monkeypatch.setattr(counting, "PART_BYTES", 5000)
    models = [bytepair.train(path, merges=200, pretokenize=name, workers=w, progress=False)
              for w in (1, 2, 3, 4)]
    assert all(m == models[0] for m in models)
    expected = counting.count_documents([real_text[:120_000].decode()], PATTERNS[name])
    got = counting.count_files(Files(path), PATTERNS[name], workers=3, part_bytes=5000)
    assert dict(got) == expected


@needs_compiled_splitter
@pytest.mark.parametrize("per_line", [False, True])
def test_gzip_gives_the_model_of_plain_text(tmp_path, real_text, per_line):
    plain = tmp_path / "kjv.txt"
    plain.write_bytes(real_text[:80_000])
    packed = tmp_path / "kjv.txt.gz"
    packed.write_bytes(gzip.compress(real_text[:80_000]))
    for name in ("cl100k", "whitespace"):
        a = bytepair.train(plain, merges=150, pretokenize=name, per_line=per_line, workers=2,
                           progress=False)
        b = bytepair.train(packed, merges=150, pretokenize=name, per_line=per_line, workers=2,
                           progress=False)
        assert a == b and len(a.merges) == 150


def test_per_line_workers_one_to_four_give_one_model(tmp_path, real_text, monkeypatch):
    path = tmp_path / "kjv.txt"
    path.write_bytes(real_text[:100_000])
    monkeypatch.setattr(counting, "PART_BYTES", 4000)
    models = [bytepair.train(path, merges=200, pretokenize="o200k", per_line=True, workers=w,
                             progress=False) for w in (1, 2, 3, 4)]
    assert all(m == models[0] for m in models)


@pytest.mark.parametrize("per_line", [False, True])
def test_blocks_stay_bounded_on_prose(tmp_path, real_text, per_line):
    # Memory does not grow with the file: a block is one read plus the tail carried
    # from the last one (after its last cut point or line end), short on prose.
    path = tmp_path / "book.txt"
    path.write_bytes(real_text * 3)
    with blocks.open_binary(path) as handle:
        sizes = [len(block) for _, block in blocks.read_blocks(handle, 0, None, per_line=per_line,
                                                                block_bytes=4096)]
    assert sum(sizes) == 3 * len(real_text)
    assert len(sizes) > 200 and max(sizes) < 2 * 4096


@pytest.mark.parametrize("per_line", [False, True])
@given(text=TEXTS, block=st.integers(1, 40), start=st.integers(0, 60),
       length=st.none() | st.integers(0, 80))
@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_mapped_blocks_cover_the_text_read_blocks_cover(tmp_path, per_line, text, block, start, length):
    # Mapped windows may end at other line ends or cut points than reads do, never
    # on other text; a part starts at a cut point, so it is cut as the part alone.
    data = (text * 2).encode()
    path = tmp_path / "doc.txt"
    path.write_bytes(data)
    start = min(start, len(data))
    end = None if length is None else min(len(data), start + length)
    with open(path, "rb") as handle:
        mapped = [(offset, bytes(b)) for offset, b in blocks.mapped_blocks(
            handle, start, end, per_line=per_line, block_bytes=block)]
        handle.seek(start)
        read = [(offset, b) for offset, b in blocks.read_blocks(
            handle, start, end, per_line=per_line, block_bytes=block)]
    assert b"".join(b for _, b in mapped) == b"".join(b for _, b in read) == data[start:end]
    offset = start
    for k, (at, b) in enumerate(mapped):
        assert at == offset and b
        offset += len(b)
        if k < len(mapped) - 1:
            assert b.endswith(b"\n") if per_line else blocks.is_cut(data[start:], offset - start)


@pytest.mark.parametrize("per_line", [False, True])
def test_mapped_file_blocks_fall_back_to_reading_what_cannot_be_mapped(tmp_path, per_line):
    data = "one two\nthree four\n".encode() * 50
    plain, packed, empty = tmp_path / "a.txt", tmp_path / "a.txt.gz", tmp_path / "e.txt"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    empty.write_bytes(b"")

    def joined(path, mapped):
        return b"".join(bytes(b) for _, b, _ in blocks.file_blocks(
            path, 0, None, per_line=per_line, cut_documents=True, block_bytes=64, mapped=mapped))

    assert joined(plain, True) == joined(packed, True) == joined(plain, False) == data
    assert joined(empty, True) == b""
    with open(plain, "rb") as handle:
        assert blocks._mappable(handle)
    with open(empty, "rb") as handle:
        assert not blocks._mappable(handle)
    if os.path.exists("/proc/self/status"):  # a regular file of size 0 that has text
        with open("/proc/self/status", "rb") as handle:
            assert not blocks._mappable(handle)
        assert b"Name:" in joined("/proc/self/status", True)
    with gzip.open(packed, "rb") as handle:
        assert not blocks._mappable(handle)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with os.fdopen(os.open(fifo, os.O_RDWR), "rb") as handle:  # O_RDWR: opens without a writer
        assert not blocks._mappable(handle)


def test_a_file_that_cannot_be_mapped_is_read(tmp_path, monkeypatch):
    # Some file systems refuse mmap: counting reads such a file instead.
    import mmap as mmap_module

    data = "one two\nthree four\n".encode() * 50
    path = tmp_path / "a.txt"
    path.write_bytes(data)

    class Refusing:
        ALLOCATIONGRANULARITY = mmap_module.ALLOCATIONGRANULARITY
        ACCESS_READ = mmap_module.ACCESS_READ

        @staticmethod
        def mmap(*args, **kwargs):
            raise OSError(19, "No such device")

    monkeypatch.setattr(blocks, "mmap", Refusing)
    with open(path, "rb") as handle:
        assert not blocks._mappable(handle)
    got = b"".join(bytes(b) for _, b, _ in blocks.file_blocks(
        path, 0, None, per_line=True, cut_documents=True, block_bytes=64, mapped=True))
    assert got == data
