"""The benchmark command lines: no apt-get without --fetch-corpora, --corpus honoured, no
contradictory flags. Nothing here times anything or builds a Debian corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from benches import corpus as corpora
from benches import ingest, merge_loop, report
from benches.corpora import debian


def test_apt_get_never_runs_without_fetch_corpora(monkeypatch):
    ran = []
    monkeypatch.setattr(debian, "_run", lambda cmd, **kwargs: ran.append(cmd))
    monkeypatch.delenv(corpora.FETCH_ENV, raising=False)
    with pytest.raises(corpora.FetchNotAllowed) as raised:
        corpora._apt(["install", "-y", "--no-install-recommends", "some-doc"])
    assert ran == []
    assert str(raised.value) == (
        "this corpus is not in the cache and building it needs `apt-get install -y "
        "--no-install-recommends some-doc`; pass --fetch-corpora to allow that, or --corpus "
        "FILE to use a text file of your own")


def test_fetch_corpora_allows_apt_get(monkeypatch):
    class Done:
        returncode = 0

    ran = []
    monkeypatch.setattr(debian, "_run", lambda cmd, **kwargs: ran.append(cmd) or Done())
    monkeypatch.delenv(corpora.FETCH_ENV, raising=False)
    parser = report.argparse.ArgumentParser()
    corpora.add_fetch_option(parser)
    corpora.apply_fetch_option(parser.parse_args(["--fetch-corpora"]))
    corpora._apt(["download", "some-doc"])
    assert ran == [["apt-get", "download", "some-doc"]]


@pytest.mark.parametrize("flags", [["--json", "x.json"], ["--doc", "x.md"], ["--plot", "x.png"],
                                   ["--json", "x.json", "--doc", "x.md"]])
def test_an_output_with_no_write_is_an_error(flags, capsys):
    with pytest.raises(SystemExit) as raised:
        report.main([*flags, "--no-write"])
    assert raised.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    named = ", ".join(f for f in flags if f.startswith("--"))
    assert last == (f"python -m benches.report: error: {named} and --no-write contradict each "
                    "other: --no-write writes no file")


def test_ingest_reads_the_given_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("BYTEPAIR_BENCH_CACHE", str(tmp_path / "cache"))
    text = tmp_path / "mine.txt"
    text.write_bytes(b"".join(b"line %d of my own text\n" % i for i in range(400)))
    cases = ingest.matrix([2000], ["gpt2"], ["lines", "document", "gzip"], [1], str(text))
    assert cases and all("custom-mine-" in case.corpus for case in cases)
    first = Path(cases[0].corpus).read_bytes()
    assert text.read_bytes().startswith(first) and len(first) <= 2000
    with pytest.raises(ValueError, match="--corpus stands for the English text"):
        ingest.matrix([2000], ["gpt2"], ["russian"], [1], str(text))


def test_merge_loop_reads_the_given_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("BYTEPAIR_BENCH_CACHE", str(tmp_path / "cache"))
    text = tmp_path / "mine.txt"
    text.write_bytes(b"".join(b"Line %d, of my own text. And more; here\n" % i for i in range(400)))
    paths = {str(path) for _, path in merge_loop.matrix(10**6, corpus=str(text))}
    # The file is smaller than every size: it is used whole, and its short-line version too.
    assert str(text.resolve()) in paths
    assert any("-short-" in p and p.startswith(str(tmp_path / "cache")) for p in paths)


def test_superbpe_bench_holds_out_a_seeded_share_or_nothing(tmp_path):
    from benches import superbpe

    text = tmp_path / "text.txt"
    lines = [b"line %d\n" % i for i in range(2000)]
    text.write_bytes(b"".join(lines))
    # Share 0 (the large corpus): the file itself, no copy.
    assert superbpe.split_lines(text, 0, tmp_path, 0.0) == (text, None)
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    train, held = superbpe.split_lines(text, 3, first)
    kept, apart = train.read_bytes().splitlines(True), held.read_bytes().splitlines(True)
    assert sorted(kept + apart) == sorted(lines) and 40 < len(apart) < 180  # about 5%
    assert superbpe.split_lines(text, 3, second)[1].read_bytes() == held.read_bytes()  # seeded


def test_help_says_where_the_cache_is_and_what_parallel_downloads(capsys, monkeypatch):
    """The cache is in the user's home directory unless told otherwise; --parallel downloads."""
    monkeypatch.setenv("COLUMNS", "1000")  # no line breaks inside the path
    for parser_main in (corpora.main, report.main):
        with pytest.raises(SystemExit):
            parser_main(["--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "~/.cache/bytepair-bench" in text and "$BYTEPAIR_BENCH_CACHE" in text
        assert "home directory" in text
    with pytest.raises(SystemExit):
        corpora.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--parallel" in text and "apt-get download" in text
