"""Reading a tiktoken ranks file fast, held equal to the plain statements it replaces.

* Each token's split: the compiled loop over all tokens against the plain loop per token
  (``_ranks_py``), on rank tables of a tiny alphabet (ties such as ``aaaa``, tokens with
  several splits, tokens ranked before their parts, bytes absent).
* The whole reading: :func:`bytepair.formats.imports.from_tiktoken` against the reading it
  replaced (the plain loop per token, then one encode per token), rules, IDs and refusals.
* The file read whole against the file read line by line.
* The checks in one call of the encoder (:func:`first_not_itself`, lookup first in
  :class:`Base`) against one encode per token or per piece.
* Ctrl-C stops the compiled loop on a hostile file at once.
"""

import base64
import signal
import subprocess
import sys
import time
from array import array
from itertools import accumulate

import pytest
from hypothesis import given, strategies as st

from bytepair.formats import _ranks_py, imports
from bytepair.formats.bases import from_tokenizer
from bytepair.formats.common import ImportRefused, first_not_itself
from bytepair.learn.rules import Merge
from bytepair.model.models import ByteModel

ALPHABET = b"abc"
SPLITS = [_ranks_py.tiktoken_splits]
try:
    from bytepair.formats import _ranks
    SPLITS.append(_ranks.tiktoken_splits)
except ImportError:  # pragma: no cover - an install without the compiled modules
    pass

WORDS = st.lists(st.lists(st.sampled_from(ALPHABET), min_size=2, max_size=7).map(bytes),
                 max_size=30)


def laid_out(tokens: list[bytes]) -> tuple[bytes, array]:
    return b"".join(tokens), array("q", [0, *accumulate(map(len, tokens))])


@given(words=WORDS, order=st.randoms(use_true_random=False), absent=st.booleans())
def test_splits_equal_the_plain_loop(words, order, absent):
    """Any order of ranks: tokens before their parts, ties, several splits, a missing byte."""
    tokens = list(dict.fromkeys([bytes([b]) for b in ALPHABET[:2 if absent else 3]] + words))
    order.shuffle(tokens)
    ranks = {token: rank for rank, token in enumerate(tokens)}
    expected = [_ranks_py.tiktoken_parts(token, ranks, rank) for rank, token in enumerate(tokens)]
    for splits in SPLITS:
        parts, lefts, rights = splits(*laid_out(tokens))
        assert list(parts) == [len(p) for p in expected]
        for rank, p in enumerate(expected):
            if len(p) == 2:
                assert (lefts[rank], rights[rank]) == (ranks.get(p[0], 2**32 - 1),
                                                       ranks.get(p[1], 2**32 - 1))


def test_splits_of_a_long_token_and_a_repeat():
    tokens = [b"a", b"aa", b"aaaa", b"a" * 300, b"aa"]  # the repeat counts at its first rank
    for splits in SPLITS:
        parts, lefts, rights = splits(*laid_out(tokens))
        # 300 bytes stop at 75 of "aaaa"; the repeat joins into its first rank's token
        assert list(parts) == [1, 2, 2, 75, 1]
        assert (lefts[2], rights[2]) == (1, 1) and (lefts[3], rights[3]) == (0, 0)
        with pytest.raises(ValueError, match="starts"):
            splits(b"ab", array("q", [1, 2]))
        with pytest.raises(ValueError, match="empty"):
            splits(b"ab", array("q", [0, 0, 2]))


HOSTILE = """
from array import array
from bytepair.formats._ranks import tiktoken_splits
print("START", flush=True)
n = 1_000_000  # a million bytes joined pair by pair: minutes of merge loop
tiktoken_splits(b"a" + b"aa" + b"a" * n, array("q", [0, 1, 3, 3 + n]))
"""


@pytest.mark.skipif(len(SPLITS) < 2, reason="the compiled loop is not built")
def test_ctrl_c_stops_the_compiled_loop_at_once():
    process = subprocess.Popen([sys.executable, "-c", HOSTILE], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "START"
        time.sleep(0.3)
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
        waited = time.monotonic() - started
    finally:
        process.kill()
    assert "KeyboardInterrupt" in err and waited < 5, (waited, err)


def old_from_tiktoken(ranks: dict[bytes, int]):
    """The reading before the compiled loop: the plain loop on each token in rank order,
    then one encode per token. ((left, right) of each rule, the ID map), or the refusal as
    (what, rank, parts)."""
    inner = {bytes([b]): b for b in range(256)}
    outer = [ranks[bytes([b])] for b in range(256)]
    rules = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) == 1:
            continue
        parts = _ranks_py.tiktoken_parts(token, ranks, rank)
        if len(parts) != 2:
            return "parts", rank, len(parts)
        token_id = 256 + len(rules)
        rules.append(Merge(len(rules), inner[parts[0]], inner[parts[1]], token_id, 0, 0))
        inner[token] = token_id
        outer.append(rank)
    model = ByteModel(rules)
    for token_id in range(256, model.vocab_size):
        if model.encode_piece(model.token_bytes(token_id)) != [token_id]:
            return "itself", outer[token_id], None
    return [(m.left, m.right) for m in rules], outer


def random_model(draw) -> ByteModel:
    """Hand-made rules over the alphabet: tokens that do not encode to themselves, and bytes
    that two rules spell, are common."""
    rules, pairs = [], set()
    for _ in range(draw(st.integers(0, 12))):
        made = list(ALPHABET) + list(range(256, 256 + len(rules)))
        pair = (draw(st.sampled_from(made)), draw(st.sampled_from(made)))
        if pair not in pairs:
            pairs.add(pair)
            rules.append(Merge(len(rules), *pair, 256 + len(rules), 0, 0))
    return ByteModel(rules)


@st.composite
def ranks_files(draw):
    """The bytes of hand-made rules in rule order (a rule's bytes at their first rank), a few
    neighbours swapped, so that tables are read, refused for a token no two earlier ones make,
    or refused for a token that does not encode to itself; then the alphabet's bytes first and
    the other 253 bytes last, as real files rank rare bytes late."""
    words = list(dict.fromkeys(random_model(draw).all_token_bytes()[256:]))
    for at in draw(st.lists(st.integers(0, max(len(words) - 2, 0)), max_size=2)):
        words[at:at + 2] = words[at:at + 2][::-1]
    tokens = [bytes([b]) for b in ALPHABET] + words
    tokens += [bytes([b]) for b in range(256) if b not in ALPHABET]
    return {token: rank for rank, token in enumerate(tokens)}


def ranks_text(ranks: dict[bytes, int]) -> str:
    return "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items())


@given(ranks=ranks_files())
def test_from_tiktoken_equals_the_old_reading(ranks):
    expected = old_from_tiktoken(ranks)
    try:
        tok = imports.from_tiktoken(ranks_text(ranks), "none")
    except ImportRefused as exc:
        what, rank, parts = expected
        assert f"(rank {rank})" in str(exc)
        assert (f"stop at {parts} parts" if what == "parts" else "does not encode to itself") \
            in str(exc)
        return
    assert ([(m.left, m.right) for m in tok.model.merges], tok.ids) == expected


def by_line(text: str):
    """The tokens by rank as the line-by-line reading takes them; None if it refuses."""
    try:
        ranks = imports._ranks_by_line(text)
    except ImportRefused:
        return None
    return sorted(ranks, key=ranks.get) if sorted(ranks.values()) == list(range(len(ranks))) \
        else None


LINES = [b"a", b"b", b"ab", b"\xff", b"abc" * 9]


@given(kinds=st.lists(st.sampled_from(["plain", "spaced", "blank", "crlf", "empty", "padding",
                                       "repeat", "digits"]), min_size=1, max_size=8),
       swap=st.booleans(), end=st.booleans())
def test_whole_file_reading_agrees_with_lines(kinds, swap, end):
    lines = []
    for rank, kind in enumerate(kinds):
        encoded = base64.b64encode(LINES[rank % len(LINES)]).decode()
        lines.append({"plain": f"{encoded} {rank}", "spaced": f" {encoded} {rank} ",
                      "blank": f"\n{encoded} {rank}", "crlf": f"{encoded} {rank}\r",
                      "empty": f"= {rank}", "padding": f"YWI {rank}",
                      "repeat": f"{base64.b64encode(LINES[0]).decode()} {rank}",
                      "digits": f"{encoded} {'٠١٢٣٤٥٦٧'[rank]}"}[kind])
    if swap and len(lines) > 1:
        lines[0], lines[1] = lines[1], lines[0]
    text = "\n".join(lines) + ("\n" if end else "")
    fast = imports._plain_tokens(text)
    assert fast is None or fast == by_line(text)
    if set(kinds) <= {"plain", "digits"} and len(kinds) <= len(LINES) and not swap:
        assert fast is not None


@given(data=st.data())
def test_first_not_itself_equals_one_encode_per_token(data):
    model = random_model(data.draw)
    spelled = model.all_token_bytes()[256:]
    expected = next(((k, model.encode_piece(piece)) for k, piece in enumerate(spelled)
                     if model.encode_piece(piece) != [256 + k]), None)
    assert first_not_itself(model, spelled) == expected


@given(data=st.data(), pieces=st.lists(st.lists(st.sampled_from(ALPHABET), max_size=6)
                                       .map(bytes), max_size=12))
def test_lookup_first_equals_one_piece_at_a_time(data, pieces):
    """A base that looks a whole piece up first (tiktoken's, Llama-3's): only pieces that
    spell a token the merges leave apart change, and they change as one piece at a time."""
    base = from_tokenizer(random_model(data.draw), "tiktoken")
    ids, offsets = base.encode_spans(*laid_out(pieces))
    assert [list(ids[a:b]) for a, b in zip(offsets, offsets[1:])] == \
        [base.encode_piece(piece) for piece in pieces]
