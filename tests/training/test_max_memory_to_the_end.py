"""--max-memory holds to the end of the run: past the last chunk of merges, while the rules
become the model and the file is written. A real process, its peak read from the kernel.

About 4.6 MB of Zipf-distributed words and a vocabulary of 65,536: the merge engine's peak is
about 29 MiB above what the process holds after its imports. Before the fix the process
then grew by about 18 MiB more, after the last check, while it made the model, copied it
(truncated to its own size) and wrote the file as one string.
"""

from __future__ import annotations

import itertools
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import needs_compiled, needs_compiled_splitter

#: Room given above what the process holds after importing: more than the merge engine's
#: peak (about 29 MiB), less than where the end of the run went before (about 47 MiB).
ROOM = 38 << 20

RUN = textwrap.dedent("""
    import sys
    from bytepair.learn.budget import resident_bytes
    from bytepair.cli.main import main
    limit = resident_bytes() + int(sys.argv[1])
    code = main([*sys.argv[2:], "--max-memory", str(limit)])
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))
    print(code, peak, limit)
""")


@pytest.fixture(scope="module")
def zipf_words(tmp_path_factory) -> Path:
    """60,000 lines of words drawn from 60,000 random words by a Zipf law (seeded)."""
    rng = random.Random(7)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 11)))
             for _ in range(60000)]
    cumulative = list(itertools.accumulate(1 / (rank + 2) ** 1.05 for rank in range(len(words))))
    path = tmp_path_factory.mktemp("zipf") / "zipf.txt"
    with open(path, "w") as out:
        for _ in range(60000):
            out.write(" ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(4, 16))))
            out.write("\n")
    return path


@pytest.mark.slow
@needs_compiled  # the room is measured for the compiled engine and splitter
@needs_compiled_splitter
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc: Linux")
def test_the_limit_holds_while_the_model_is_made_and_written(zipf_words, tmp_path):
    output = tmp_path / "model.json"
    done = subprocess.run([sys.executable, "-c", RUN, str(ROOM), "train", str(zipf_words),
                           "--vocab-size", "65536", "--workers", "2", "-q", "-o", str(output)],
                          capture_output=True, text=True, timeout=600)
    code, peak, limit = map(int, done.stdout.split())
    if code == 0:  # it fits: the peak, the end of the run included, is within the limit
        assert done.stderr == ""
        assert peak <= limit, f"peak {peak / 2**20:.1f} MiB, limit {limit / 2**20:.1f} MiB"
        assert output.exists()
    else:  # or the run stopped: one line, nothing written
        assert code == 2
        assert done.stderr.startswith("bytepair: error: --max-memory: ")
        assert done.stderr.count("\n") == 1
        assert not output.exists()

