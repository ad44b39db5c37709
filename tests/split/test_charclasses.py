"""The code-point class table made at build time must be what ``regex`` says, code point by code point."""

import re
import subprocess
import sys

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from bytepair.split import charclasses, fastsplit

compiled = pytest.mark.skipif(not fastsplit.available(), reason="compiled splitter not installed")


@pytest.fixture(scope="module")
def regex_table():
    # From the bracketed unions the scanners name, not the single classes the build uses.
    return charclasses.build_table(charclasses.CLASS_SOURCES)


@compiled
def test_shipped_table_equals_regex_over_all_code_points(regex_table):
    from bytepair.split import _split

    shipped = _split.shipped_classes()
    assert len(shipped) == charclasses.CODE_POINTS == 0x110000
    if _split.TABLE_REGEX_VERSION == regex.__version__:
        assert _split.TABLE_ORIGIN == "shipped"
        differ = [hex(c) for c in range(len(shipped)) if shipped[c] != regex_table[c]]
        assert not differ, f"{len(differ)} code points differ, first {differ[:5]}"
    else:  # another regex than the build's: the table was made again at import
        assert _split.TABLE_ORIGIN == "rebuilt"
    assert _split.classes() == regex_table


@compiled
def test_the_table_has_every_class():
    from bytepair.split import _split

    table = _split.shipped_classes()
    for name, bit in charclasses.BITS.items():
        assert any(b & bit for b in table), name
    assert table[ord("A")] == charclasses.LETTER | charclasses.UPPERISH | charclasses.WORD
    assert table[ord("7")] == charclasses.NUMBER | charclasses.WORD
    assert table[0x0301] & charclasses.MARK  # combining acute accent
    assert table[0x3000] == charclasses.SPACE  # ideographic space
    assert table[0x10FFFF] == 0  # a noncharacter


def test_regex_version_is_the_imported_modules():
    assert charclasses.regex_version() == regex.__version__


@given(st.lists(st.sampled_from([0, 0, 1, 5, 64]), max_size=40))
def test_runs_expand_back_to_the_table(values):
    table = bytes(values)
    runs = charclasses.runs(table)
    assert charclasses.expand(runs, len(table)) == table
    assert all(a[1] != b[1] for a, b in zip(runs, runs[1:]))  # runs are maximal


def test_header_holds_the_table_and_the_bits():
    table = bytes([0, 0, 5, 5, 5, 0, 64]) + bytes(charclasses.CODE_POINTS - 7)
    text = charclasses.header(table, "2000.1.1")
    assert '#define CLASS_TABLE_REGEX_VERSION "2000.1.1"' in text
    for name, bit in charclasses.BITS.items():
        assert f"#define CLASS_{name} {bit}\n" in text

    def numbers(array_name):
        body = text.split(array_name + "[CLASS_RUN_COUNT] = {", 1)[1].split("};", 1)[0]
        return [int(n) for n in re.findall(r"\d+", body)]

    starts, values = numbers("CLASS_RUN_START"), numbers("CLASS_RUN_VALUE")
    assert f"#define CLASS_RUN_COUNT {len(starts)}\n" in text
    assert charclasses.expand(list(zip(starts, values))) == table


def test_write_header_leaves_a_current_file_alone(tmp_path):
    path = tmp_path / "classes.h"
    assert charclasses.write_header(path)
    written = path.stat().st_mtime_ns
    assert not charclasses.write_header(path)
    assert path.stat().st_mtime_ns == written


def test_import_leaves_slow_modules_unimported():
    # What makes `import bytepair` slow is kept for first use (benches/import_time.py times it).
    slow = ["regex", "tqdm", "multiprocessing", "concurrent.futures", "secrets", "uuid", "ctypes",
            "hashlib", "shutil", "tempfile",
            "pyarrow", "fsspec", "dask", "distributed", "bytepair.evaluation.report"]
    code = f"import sys, bytepair; print([m for m in {slow!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
