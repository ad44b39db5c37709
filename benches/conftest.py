"""Options and fixtures of the pytest-benchmark cases (``python -m pytest benches/``).

pytest's ``testpaths`` is ``["tests"]``, so a plain ``python -m pytest`` never
collects these; name the directory to run them.
"""

import pytest

from benches import corpus, harness


def pytest_addoption(parser):
    group = parser.getgroup("bytepair benchmarks")
    group.addoption("--bench-corpus", default=None, metavar="PATH",
                    help="train on prefixes of this text file instead of the English recipe")
    group.addoption("--bench-budget", type=float, default=harness.DEFAULT_BUDGET,
                    metavar="SECONDS",
                    help="skip naive cases estimated to take longer (default %(default)s)")


@pytest.fixture(scope="session")
def budget(request) -> float:
    return request.config.getoption("--bench-budget")


@pytest.fixture(scope="session")
def corpus_file(request):
    """``corpus_file("1MB")``: the corpus's path, built once (peers read the file themselves)."""
    path = request.config.getoption("--bench-corpus")

    def file(size: str):
        return corpus.corpus_path(size, path)

    return file


@pytest.fixture(scope="session")
def corpus_lines(request):
    """``corpus_lines("1MB")``: the corpus's lines (one document each), built once per session."""
    path = request.config.getoption("--bench-corpus")
    cache = {}

    def lines(size: str) -> list[bytes]:
        if size not in cache:
            cache[size] = corpus.documents(corpus.load(size, path))
        return cache[size]

    return lines
