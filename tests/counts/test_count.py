"""bytepair.count and training from piece-count tables."""

from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bytepair
from bytepair import Files, PieceCounts
from bytepair.split.pretokenize import resolve_pattern, splitter
from bytepair.training.trainer import Trainer
from helpers import write_shards

PATTERNS = ["gpt2", "whitespace", None]


def reference(documents, pretokenize):
    """Counting by hand with the regex splitter: the table count() must return."""
    source = resolve_pattern(pretokenize)
    if source is None:
        counts = Counter(doc.encode() for doc in documents if doc)
    else:
        split = splitter(source)
        counts = Counter(piece.encode() for doc in documents for piece in split(doc))
    return PieceCounts(counts, pattern=pretokenize)


@pytest.fixture
def lines(real_text):
    return real_text.decode().splitlines()[:3000] + ["naïve café 東京", "", "aaaa  aaaa"]


@pytest.fixture
def shards(tmp_path, lines):
    return write_shards(tmp_path, lines, 3)


@pytest.mark.parametrize("pretokenize", PATTERNS)
def test_count_equals_counting_by_hand(shards, lines, pretokenize):
    expected = reference([line for i in range(3) for line in lines[i::3]], pretokenize)
    for workers in (1, 2):
        table = bytepair.count(Files(*shards, per_line=True), pretokenize=pretokenize,
                               workers=workers, progress=False)
        assert table == expected
        assert table.pattern == resolve_pattern(pretokenize)
    assert bytepair.count(lines, pretokenize=pretokenize, progress=False) == reference(lines, pretokenize)


def test_count_accepts_paths_and_globs(shards):
    by_glob = bytepair.count(str(shards[0].parent / "shard-*.txt"), per_line=True, progress=False)
    assert by_glob == bytepair.count(Files(*shards, per_line=True), progress=False)
    assert by_glob == bytepair.count(shards, per_line=True, progress=False)


@pytest.mark.parametrize("pretokenize", PATTERNS)
def test_training_from_shard_tables_equals_training_on_all_shards(shards, tmp_path, pretokenize):
    direct = bytepair.train(Files(*shards, per_line=True), merges=150, pretokenize=pretokenize,
                            special_tokens=["<|end|>"], progress=False)
    tables = [bytepair.count(shard, per_line=True, pretokenize=pretokenize, progress=False)
              for shard in shards]
    # Each table goes through a file, as it would between machines.
    for i, table in enumerate(tables):
        table.save(tmp_path / f"{i}.counts")
    loaded = [PieceCounts.load(tmp_path / f"{i}.counts") for i in range(3)]
    options = dict(merges=150, pretokenize=pretokenize, special_tokens=["<|end|>"], progress=False)
    assert bytepair.train(loaded, **options) == direct
    assert bytepair.train(sum(loaded), **options) == direct
    assert bytepair.train(tuple(loaded), **options) == direct


def test_training_from_counts_continues_from_init(shards):
    table = bytepair.count(Files(*shards, per_line=True), progress=False)
    start = bytepair.train(table, merges=40, progress=False)
    assert bytepair.train(table, merges=90, init=start, progress=False) == \
        bytepair.train(table, merges=90, progress=False)


def test_training_from_counts_checks_the_pattern(shards):
    table = bytepair.count(shards[0], per_line=True, pretokenize="whitespace", progress=False)
    # Without pretokenize the table's own pattern is used; a conflicting one names both.
    assert bytepair.train(table, merges=10, progress=False).pattern == table.pattern
    with pytest.raises(ValueError, match="pretokenize: the counts were cut with whitespace, not gpt2"):
        bytepair.train(table, merges=10, pretokenize="gpt2", progress=False)
    other = bytepair.count(shards[1], per_line=True, pretokenize="gpt2", progress=False)
    with pytest.raises(ValueError, match="different patterns: whitespace and gpt2"):
        bytepair.train([table, other], merges=10, pretokenize="whitespace", progress=False)
    with pytest.raises(ValueError, match="empty"):
        bytepair.train(PieceCounts(pattern="gpt2"), merges=10, progress=False)


def test_parquet_counts_equal_text_counts(tmp_path, lines):
    text = tmp_path / "lines.txt"
    text.write_text("\n".join(lines) + "\n")
    parquet = tmp_path / "lines.parquet"
    pq.write_table(pa.table({"id": list(range(len(lines))), "body": lines}), parquet,
                   row_group_size=200)
    expected = bytepair.count(Files(text, per_line=True), workers=1, progress=False)
    for workers in (1, 2):
        assert bytepair.count(parquet, text_column="body", workers=workers, progress=False) == expected
    with pytest.raises(ValueError, match="no column 'text'; the columns are 'id', 'body'"):
        bytepair.count(parquet, progress=False)


def test_count_arguments_are_checked(shards):
    with pytest.raises(ValueError, match="workers"):
        bytepair.count(shards, workers=0)
    with pytest.raises(ValueError, match="pretokenize"):
        bytepair.count(shards, pretokenize="(")
    with pytest.raises(TypeError, match="client must be a distributed.Client"):
        bytepair.count(shards, client="tcp://127.0.0.1:8786")
    with pytest.raises(TypeError, match="corpus"):
        bytepair.count(b"raw bytes")


def test_training_empties_only_the_tables_it_made(shards, monkeypatch):
    # train() counts into a table of its own and frees it once the engine holds
    # the pieces; a table the caller passes must come back as it went in.
    made = []
    count = Trainer.count

    def count_and_keep(*args, **kwargs):
        made.append(count(*args, **kwargs))
        return made[-1]

    given = bytepair.count(Files(*shards, per_line=True), progress=False)
    kept = PieceCounts(dict(given), pattern="gpt2")
    from_table = bytepair.train(given, merges=120, progress=False)
    assert given == kept and len(given) == len(kept) > 0
    assert bytepair.train([given, given], merges=120, progress=False) == \
        bytepair.train(given + given, merges=120, progress=False)
    assert given == kept

    monkeypatch.setattr(Trainer, "count", count_and_keep)
    assert bytepair.train(Files(*shards, per_line=True), merges=120, progress=False) == from_table
    assert len(made) == 1 and len(made[0]) == 0 and made[0].total() == 0
