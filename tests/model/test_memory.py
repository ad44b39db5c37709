"""Memory bounds of loading and encoding, each checked in a subprocess with an address-space limit.

* A chain of 100,000 rules, each extending the last token, loads and
  encodes: token bytes built up front would need about 5 GB.
* One 8 MB piece encodes within 40 bytes of peak RSS per input byte.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bytepair
from bytepair.model import codec

pytestmark = pytest.mark.skipif(
    not codec.compiled(), reason="the compiled encoder is not in use (BYTEPAIR_NO_EXTENSIONS)")

SOURCE = str(Path(bytepair.__file__).resolve().parents[1])
DATA = Path(__file__).parents[1] / "data"

# Runs first in every child: cap the address space at `limit` bytes above the
# current size and define peak(), the peak RSS in bytes.
PRELUDE = """
import resource, sys
import bytepair

def vm_size():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

def cap(extra):
    limit = vm_size() + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
"""


def run_child(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=SOURCE, BYTEPAIR_NO_EXTENSIONS="")
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
def test_chain_model_of_100k_rules_loads_and_encodes_within_a_memory_cap(tmp_path):
    rules = 100_000
    rows = [[97, 97, 1, 1]] + [[255 + k, 97, 1, 1] for k in range(1, rules)]
    path = tmp_path / "chain.json"
    path.write_text(json.dumps({"format": "bytepair-model", "version": 1, "kind": "bytes",
                                "pattern": None, "merges": rows}))
    out = run_child(f"""
        cap(600 << 20)  # quadratic token bytes would need ~5 GB
        model = bytepair.load({str(path)!r})
        last = 255 + {rules}
        assert model.token_length(last) == {rules} + 1
        assert model.token_bytes(last) == b"a" * ({rules} + 1)
        data = b"a" * ({rules} + 1)
        ids = model.encode(data)
        assert model.decode(ids) == data
        assert model.decode([last, last]) == data * 2
        print(len(ids))
    """)
    assert int(out) > 0


def _piece_rss(model_code: str, data_code: str, size: int) -> float:
    out = run_child(f"""
        {model_code}
        data = {data_code}
        assert len(data) == {size}
        model.encode(b"warm up")
        before = peak()
        cap(64 * len(data) + (64 << 20))  # a safety net; the RSS bound is checked below
        ids = model.encode(data)
        assert model.decode(ids) == data
        grown = peak() - before
        print(grown / len(data))
    """)
    return float(out)


@pytest.mark.slow
def test_one_8mb_byte_mode_piece_encodes_within_40_bytes_per_input_byte():
    size = 8 << 20
    per_byte = _piece_rss(
        f"""
        import gzip
        text = gzip.decompress(open({str(DATA / 'kjv-leviticus-revelation.txt.gz')!r}, "rb").read())
        model = bytepair.train_bytes(text[:300_000].splitlines(), 500)
        """,
        f"(text * 3)[:{size}]",
        size,
    )
    assert per_byte <= 40, f"{per_byte:.1f} bytes of RSS per input byte"


@pytest.mark.slow
def test_8mb_of_spaces_with_gpt2_encodes_within_40_bytes_per_input_byte():
    size = 8 << 20
    per_byte = _piece_rss(
        f"""
        text = open({str(DATA / 'kjv-genesis-exodus.txt')!r}, "rb").read()
        model = bytepair.train([text[:200_000].replace(b"  ", b"        ")], merges=400,
                               progress=False).model
        """,
        f"b' ' * {size}",
        size,
    )
    assert per_byte <= 40, f"{per_byte:.1f} bytes of RSS per input byte"


def test_piece_cache_stays_within_its_byte_bound_while_encoding_many_distinct_pieces():
    # 1,500 distinct 20 KB pieces (never cached: longer than 256 bytes) and 400,000
    # distinct short ones (cached, within the byte budget of the model's cache).
    out = run_child(f"""
        text = open({str(DATA / 'kjv-genesis-exodus.txt')!r}).read()
        model = bytepair.train([text[:100_000]], merges=300, progress=False).model
        model.encode("warm up")
        before = peak()
        cap(256 << 20)
        letters = "abcdefghijklmnopqrstuvwxyz"
        for i in range(1500):
            piece = (letters[i % 26] + letters[(i // 26) % 26] + letters[i // 676]) * 6827
            model.encode(piece)
        for start in range(0, 400_000, 10_000):
            model.encode(" ".join(f"w{{i:07d}}x" for i in range(start, start + 10_000)))
        cache = model._caches.take()
        assert cache.nbytes <= cache.budget, (cache.nbytes, cache.budget)
        assert cache.stats["resets"] >= 1
        print((peak() - before) / cache.budget)
    """)
    assert float(out) < 3, f"peak RSS grew by {float(out):.1f}x the cache budget"


@pytest.mark.slow
def test_memory_does_not_grow_across_many_threaded_calls_beyond_the_caches():
    # 120 calls on 2 threads, each with 20,000 pieces never seen before: the model keeps
    # one cache per call that ran at the same time, within its byte budget, and each thread
    # learns in a cache that joins it and is freed when the call ends. The cache fills, is
    # emptied when the text moves on, and fills again. Peak RSS grows by the caches and the
    # allocator's slack (threads get their own arenas), and in the last 60 calls by less
    # than one (growing with the text would be many: 1.2 million new pieces).
    out = run_child(f"""
        from bytepair.model import codec, parts
        text = open({str(DATA / 'kjv-genesis-exodus.txt')!r}).read()
        tok = bytepair.train([text[:100_000]], merges=300, pretokenize="gpt2", progress=False)
        parts.THREAD_MIN_CHARS = 1

        def batch(call):
            return [" ".join(f"w{{call:03d}}{{i:05d}}x" for i in range(k, k + 1000))
                    for k in range(0, 20_000, 1000)]

        def calls(first, last):
            for call in range(first, last):
                if call % 4:
                    tok.encode_batch(batch(call), threads=2)
                else:
                    tok.encode_to_array(batch(call), threads=2)

        calls(0, 1)
        before = peak()
        calls(1, 60)
        settled = peak()
        calls(60, 120)
        pool = tok.model._caches
        caches = [pool.take() for _ in range(len(pool))]
        assert len(caches) == 1, len(caches)
        assert all(c.nbytes <= c.budget == codec.CACHE_BYTES for c in caches)
        print((settled - before) / codec.CACHE_BYTES, (peak() - settled) / codec.CACHE_BYTES)
    """)
    filling, full = map(float, out.split())
    assert filling + full < 3, f"peak RSS grew by {filling + full:.2f}x a cache's budget"
    assert full < 1, f"peak RSS grew by {full:.2f}x a cache's budget in the last 60 calls"
