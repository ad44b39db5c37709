"""What the export docs tell users to write runs as written and gives bytepair's IDs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from tokenizers import Regex, pre_tokenizers

import bytepair
from bytepair.formats.export import to_tiktoken
from bytepair.split.dialects import hf_pattern, tiktoken_pattern
from bytepair.split.pretokenize import PATTERNS, splitter

TEXT = "Hello world 12345 don't I'LL\n\n  naïve 🙂<|endoftext|>"


def docstring_block(doc: str) -> str:
    """The indented code block after the first ``::`` of a docstring."""
    lines = doc.split("::\n", 1)[1].splitlines()
    block = []
    for line in lines[1:]:
        if line.strip() and not line.startswith(" " * 8):
            break
        block.append(line)
    return textwrap.dedent("\n".join(block))


def test_to_tiktokens_snippet_runs_in_a_fresh_interpreter(tmp_path, real_text):
    """``tiktoken.load`` is a submodule: the snippet imports it itself."""
    documents = real_text.decode().splitlines()[:500]
    tok = bytepair.train(documents, vocab_size=400, pretokenize="cl100k",
                         special_tokens=["<|endoftext|>"], progress=False)
    tok.save(tmp_path / "tok.json")
    path = tmp_path / "tok.tiktoken"
    to_tiktoken(tok, path)
    script = "\n".join([
        "import bytepair, pathlib",
        f"tokenizer = bytepair.load({str(tmp_path / 'tok.json')!r})",
        f"path = pathlib.Path({str(path)!r})",
        docstring_block(to_tiktoken.__doc__),
        f"print(enc.encode({TEXT!r}, allowed_special='all'))",
    ])
    # A fresh interpreter: this test process has imported tiktoken.load already.
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "TIKTOKEN_CACHE_DIR": ""})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tok.encode(TEXT, allowed_special="all"))


def test_hf_pattern_takes_a_name_as_the_docs_say():
    """docs/from-tokenizers.md: ``Split(Regex(hf_pattern(...)))`` for a named pattern."""
    for name in ("cl100k", "o200k", "whitespace", "nanochat"):
        assert hf_pattern(name) == hf_pattern(PATTERNS[name])
        assert tiktoken_pattern(name) == tiktoken_pattern(PATTERNS[name])
    split = pre_tokenizers.Split(Regex(hf_pattern("cl100k")), behavior="isolated")
    pieces = [piece for piece, _ in split.pre_tokenize_str(TEXT)]
    assert pieces == splitter(PATTERNS["cl100k"])(TEXT)
