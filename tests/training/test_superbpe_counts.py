"""SuperBPE from count tables, and on a Dask cluster: the same model as from the documents.

A SuperBPE run counts the documents twice, once with each stage's pattern. The tables
that :func:`bytepair.count` makes with those two patterns stand for the documents: the
stage of each table is the pattern it was cut with, and tables of shards add up.
"""

import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.split.pretokenize import PATTERNS
from helpers import KJV, MULTILINGUAL, assert_bad_input, run, spy_on_workers

GPT2, SUPERBPE = PATTERNS["gpt2"], PATTERNS["superbpe"]
UNITS = ["a", "b", "ab", " ", "  ", ",", "!!", "...", "1", "42", "\n", "\t", "é", "日本"]
TEXTS = st.lists(st.lists(st.sampled_from(UNITS), max_size=14).map("".join), max_size=8)


def tables_of(docs, shards=1, stage2="superbpe", stage1="gpt2"):
    """Both stages' tables of ``docs``, counted ``shards`` shards apiece."""
    parts = [docs[i::shards] for i in range(shards)]
    return ([bytepair.count(part, pretokenize=stage1, workers=1, progress=False) for part in parts]
            + [bytepair.count(part, pretokenize=stage2, workers=1, progress=False) for part in parts])


# -- the model from tables is the model from the documents --

@settings(max_examples=max(10, settings.default.max_examples // 4))
@given(TEXTS, st.integers(256, 290), st.integers(1, 40), st.integers(1, 4), st.integers(1, 3),
       st.randoms(use_true_random=False))
def test_tables_give_the_model_of_the_documents(docs, transition, extra, max_words, shards, rng):
    if not "".join(docs):
        return  # no text: refused either way
    vocab = transition + extra
    want = bytepair.train(docs, vocab_size=vocab, superbpe=transition, max_words=max_words,
                          workers=1, progress=False)
    tables = tables_of(docs, shards)
    rng.shuffle(tables)  # each table's pattern, not its place, says its stage
    got = bytepair.train(tables, vocab_size=vocab, superbpe=transition, max_words=max_words,
                         progress=False)
    assert got == want
    assert got.model.stages == want.model.stages


@pytest.fixture(scope="module")
def verses(tmp_path_factory):
    path = tmp_path_factory.mktemp("superbpe-counts") / "verses.txt"
    path.write_text("\n".join(KJV.read_text(encoding="utf-8").splitlines()[:400]) + "\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("text, shards", [(KJV, 1), (KJV, 3), (MULTILINGUAL, 2)])
def test_real_text_tables_give_the_model_of_the_documents(text, shards):
    docs = text.read_text(encoding="utf-8").splitlines()[:300]
    want = bytepair.train(docs, vocab_size=700, superbpe=500, max_words=3, progress=False)
    tables = tables_of(docs, shards)
    got = bytepair.train(tables, vocab_size=700, superbpe=500, max_words=3, progress=False)
    assert got == want
    assert [got.encode(doc) for doc in docs[:40]] == [want.encode(doc) for doc in docs[:40]]


def test_the_callers_tables_are_left_whole(verses):
    files = bytepair.Files(verses, per_line=True)
    one = bytepair.count(files, workers=1, progress=False)
    two = bytepair.count(files, pretokenize="superbpe", workers=1, progress=False)
    kept = [dict(one), dict(two)]
    first = bytepair.train([one, two], vocab_size=700, superbpe=500, progress=False)
    assert [dict(one), dict(two)] == kept
    assert bytepair.train([two, one], vocab_size=700, superbpe=500, progress=False) == first
    assert first == bytepair.train(files, vocab_size=700, superbpe=500, progress=False)


def test_the_stage_2_table_is_the_isolated_split():
    # Matches are pieces, and so is every stretch between two matches; the table records
    # which pattern cut it.
    table = bytepair.count(["In the beginning, God created... 1234 things!!  Then  rest."],
                           pretokenize="superbpe", workers=1, progress=False)
    assert table.pattern == SUPERBPE
    assert dict(table) == {b"In the beginning, God created": 1, b"...": 1, b" ": 3, b"123": 1,
                           b"4": 1, b" things": 1, b"!!": 1, b" Then": 1, b" rest.": 1}


def test_stage_1_tables_may_be_left_out_when_init_stands_for_stage_1(verses):
    files = bytepair.Files(verses, per_line=True)
    stage2 = bytepair.count(files, pretokenize="superbpe", workers=1, progress=False)
    whole = bytepair.train(files, vocab_size=700, superbpe=500, progress=False)
    plain = bytepair.train(files, vocab_size=500, progress=False)
    assert bytepair.train(stage2, vocab_size=700, superbpe=500, init=plain, progress=False) == whole
    part = bytepair.train(files, vocab_size=600, superbpe=500, progress=False)
    assert bytepair.train(stage2, vocab_size=700, superbpe=500, init=part, progress=False) == whole


def test_custom_patterns_and_one_pattern_for_both_stages():
    docs = ["one two, three four. five six", "one two three", "six, five. four"] * 2
    stage1, stage2 = r"\S+|\s+", r"[,.]"
    want = bytepair.train(docs, vocab_size=320, superbpe=280, max_words=2, pretokenize=stage1,
                          superbpe_pretokenize=stage2, progress=False)
    tables = tables_of(docs, 2, stage2=stage2, stage1=stage1)
    assert bytepair.train(tables, vocab_size=320, superbpe=280, max_words=2,
                          superbpe_pretokenize=stage2, progress=False) == want
    # The same pattern for both stages: one set of tables serves both.
    same = bytepair.train(docs, vocab_size=320, superbpe=280, pretokenize="whitespace",
                          superbpe_pretokenize="whitespace", progress=False)
    tables = tables_of(docs, 2, stage2="whitespace", stage1="whitespace")[:2]
    assert bytepair.train(tables, vocab_size=320, superbpe=280, pretokenize="whitespace",
                          superbpe_pretokenize="whitespace", progress=False) == same


# -- bad combinations: one clear line each --

DOCS = ["some text, here!! and 12 more", "more text"]


@pytest.mark.parametrize("patterns, options, message", [
    (["gpt2"], {}, "corpus: no count table was cut with the stage-2 pattern superbpe"),
    (["superbpe"], {}, "corpus: no count table was cut with the stage-1 pattern gpt2"),
    (["gpt2", "superbpe", "cl100k"], dict(pretokenize="gpt2"),
     "corpus: a count table was cut with cl100k, neither the stage-1 pattern gpt2 nor the "
     "stage-2 pattern superbpe"),
    (["gpt2", "superbpe", "cl100k"], {},
     "corpus: the count tables were cut with cl100k and gpt2 besides the stage-2 pattern superbpe"),
    (["cl100k", "superbpe"], dict(pretokenize="gpt2"),
     "corpus: a count table was cut with cl100k, neither the stage-1 pattern gpt2"),
    (["gpt2", "gpt2"], {}, "corpus: no count table was cut with the stage-2 pattern superbpe"),
    (["gpt2", "superbpe"], dict(pretokenize="gpt2", superbpe_pretokenize="whitespace"),
     "corpus: a count table was cut with superbpe, neither the stage-1 pattern gpt2 nor the "
     "stage-2 pattern whitespace"),
])
def test_bad_table_sets(patterns, options, message):
    tables = [bytepair.count(DOCS, pretokenize=p, workers=1, progress=False) for p in patterns]
    with pytest.raises(ValueError, match=message) as caught:
        bytepair.train(tables, vocab_size=400, superbpe=300, progress=False, **options)
    assert "\n" not in str(caught.value)


def test_a_stage_whose_tables_add_up_past_64_bits_is_refused_before_any_work():
    big = [bytepair.PieceCounts({"a b": 2**62}, pattern="superbpe") for _ in range(2)]
    tables = [bytepair.PieceCounts({"a": 1}, pattern="gpt2"), *big]
    with pytest.raises(ValueError, match="corpus: the tables cut with superbpe count more than "
                                         r"2\*\*63 - 1 pieces together"):
        bytepair.train(tables, vocab_size=400, superbpe=300, progress=False)


def test_empty_tables_are_refused():
    tables = [bytepair.PieceCounts({}, pattern="gpt2"), bytepair.PieceCounts({}, pattern="superbpe")]
    with pytest.raises(ValueError, match="corpus: no text to train on"):
        bytepair.train(tables, vocab_size=400, superbpe=300, progress=False)


def test_init_from_another_pattern_is_refused():
    plain = bytepair.train(DOCS, vocab_size=280, pretokenize="cl100k", progress=False)
    with pytest.raises(ValueError, match="init was trained with a different pretokenize pattern"):
        bytepair.train(tables_of(DOCS), vocab_size=400, superbpe=300, init=plain, progress=False)


# -- the command line --

@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    lines = KJV.read_text(encoding="utf-8").splitlines()[:300]
    folder = tmp_path_factory.mktemp("cli-superbpe-counts")
    paths = []
    for i in range(2):
        path = folder / f"shard-{i}.txt"
        path.write_text("\n".join(lines[i::2]) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def test_cli_count_both_patterns_then_train(tmp_path, capsys, shards):
    tables = []
    for i, shard in enumerate(shards):
        for pattern in ("gpt2", "superbpe"):
            table = tmp_path / f"{pattern}-{i}.counts"
            code, _, err = run(capsys, "count", shard, "--per-line", "--pretokenize", pattern,
                               "-o", table)
            assert code == 0, err
            assert f"pattern {pattern}" in err
            tables.append(table)
    assert bytepair.PieceCounts.load(tables[1]).pattern == SUPERBPE
    code, _, err = run(capsys, "train", "--counts", *tables, "--vocab-size", "600,700",
                       "--superbpe", 500, "--max-words", 3, "-o", tmp_path / "m{vocab_size}.json")
    assert code == 0, err
    want = bytepair.train(bytepair.Files(*shards, per_line=True), vocab_size=700, superbpe=500,
                          max_words=3, progress=False)
    assert bytepair.load(tmp_path / "m700.json") == want
    assert bytepair.load(tmp_path / "m600.json") == want.truncate(600)


@pytest.mark.parametrize("patterns, options, words", [
    (["gpt2"], [], ["--counts: no count table was cut with the stage-2 pattern superbpe"]),
    (["superbpe"], [], ["--counts: no count table was cut with the stage-1 pattern gpt2"]),
    (["gpt2", "superbpe", "cl100k"], ["--pretokenize", "gpt2"],
     ["--counts: a count table was cut with cl100k, neither"]),
    (["gpt2", "superbpe", "cl100k"], [], ["besides the stage-2 pattern", "--pretokenize names"]),
    (["gpt2", "superbpe"], [], []),  # without --superbpe: two patterns cannot be added up
])
def test_cli_bad_table_sets_are_one_line(tmp_path, capsys, shards, patterns, options, words):
    tables = []
    for pattern in patterns:
        table = tmp_path / f"{pattern}.counts"
        assert run(capsys, "count", shards[0], "--per-line", "--pretokenize", pattern, "-q",
                   "-o", table)[0] == 0
        tables.append(table)
    superbpe = ["--superbpe", 300] if words else []
    if not words:
        words = ["cannot combine piece counts made with different patterns"]
    assert_bad_input(capsys, tmp_path, ["train", "--counts", *tables, "--vocab-size", 400,
                                        *superbpe, *options, "-o", tmp_path / "m.json"], *words)


# -- a Dask cluster counts both stages --

def test_a_dask_client_gives_the_same_model(verses):
    distributed = pytest.importorskip("distributed")
    files = bytepair.Files(verses, per_line=True)
    want = bytepair.train(files, vocab_size=700, superbpe=500, workers=1, progress=False)
    # One process (a thread pool for a worker): the same counting tasks, started quickly.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None, silence_logs=40,
                                  scheduler_kwargs={"dashboard_address": ":0"}) as cluster:
        with distributed.Client(cluster, set_as_default=False) as client:
            with distributed.get_task_stream(client) as stream:
                got = bytepair.train(files, vocab_size=700, superbpe=500, client=client,
                                     progress=False)
    assert got == want
    assert got.model.stages == want.model.stages
    # Both stages were counted by the cluster's tasks.
    assert len([t for t in stream.data if t["key"].startswith("bytepair-count-")]) >= 2


def test_readme_commands_run_as_written(tmp_path, capsys, monkeypatch):
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    commands = [shlex.split(line.split("  #")[0]) for line in readme.splitlines()
                if line.startswith(("bytepair count corpus.txt --per-line",
                                    "bytepair train --counts s1.counts s2.counts"))]
    assert [c[1] for c in commands] == ["count", "count", "train"], commands
    monkeypatch.chdir(tmp_path)
    lines = KJV.read_text(encoding="utf-8").splitlines()[:200]
    (tmp_path / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for command in commands:
        code, _, err = run(capsys, *command[1:], "-q")
        assert code == 0, err
    # A corpus this small runs out of pairs in both stages; the model is still the same.
    want = bytepair.train(lines, vocab_size=65536, superbpe=49152, progress=False)
    assert bytepair.load(tmp_path / "super.json") == want


def test_two_workers_share_both_stages_and_give_the_same_model(tmp_path, monkeypatch):
    path = tmp_path / "verses.txt"
    path.write_text("\n".join(KJV.read_text(encoding="utf-8").splitlines()[:500]) + "\n",
                    encoding="utf-8")
    files = bytepair.Files(path, per_line=True)
    one = bytepair.train(files, vocab_size=700, superbpe=500, workers=1, progress=False)
    spy = spy_on_workers(monkeypatch, part_bytes=1000)
    two = bytepair.train(files, vocab_size=700, superbpe=500, workers=2, progress=False)
    # Workers, never the caller, counted both stages: two threads or processes per stage, or
    # (compiled counting) one beside stage-1 learning for stage 2.
    assert len(spy.workers) >= 2 and spy.caller not in spy.workers
    assert sum(spy.sizes) == 2 * path.stat().st_size  # every byte once in each stage
    assert one == two
