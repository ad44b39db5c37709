"""On real text, bytepair's merges equal rustbpe's (nanochat's trainer) for cl100k and o200k."""

import gzip

import pytest
import rustbpe

import bytepair
from bytepair.split.pretokenize import PATTERNS
from helpers import DATA, needs_compiled_splitter

VOCAB = 1024


@needs_compiled_splitter
@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_merges_equal_rustbpe_on_real_text(tmp_path, real_text, name):
    # About 1 MB of real English (the KJV), one document per line.
    more = gzip.decompress((DATA / "kjv-leviticus-revelation.txt.gz").read_bytes())
    lines = (real_text + more)[:1_000_000].decode().splitlines()
    assert len(lines) > 5_000 and sum(map(len, lines)) > 900_000
    theirs = rustbpe.Tokenizer()
    theirs.train_from_iterator(iter(lines), VOCAB, pattern=PATTERNS[name])
    their_tokens = [token for token, rank in sorted(theirs.get_mergeable_ranks(), key=lambda t: t[1])
                    if rank >= 256]
    path = tmp_path / "text.txt"
    path.write_text("\n".join(lines) + "\n")
    ours = bytepair.train(path, vocab_size=VOCAB, pretokenize=name, per_line=True, workers=2,
                          progress=False)
    our_tokens = [ours.token_bytes(256 + rank) for rank in range(len(ours.merges))]
    assert len(our_tokens) == VOCAB - 256
    assert our_tokens == their_tokens
