"""Real text for the benchmarks, assembled from Debian packages: English, other
languages, and a large corpus of both.

The recipes are in benches/corpora/, one module per source: english.py, world.py
(other languages), large.py, catalogs.py, parallel.py, synthetic.py (simulated text); debian.py
fetches and unpacks the packages, pages.py reads their HTML and man pages, paths.py picks
a corpus by language and size.

Command line (prints one path per size)::

    python -m benches.corpus --size 10MB
    python -m benches.corpus --size 0.1MB --size 1MB --size 10MB --size 100MB
    python -m benches.corpus --size 1MB --corpus my-text.txt
    python -m benches.corpus --size 1MB --info     # the manifest too
    python -m benches.corpus --language russian --size 10MB
    python -m benches.corpus --language japanese --size all --info
    python -m benches.corpus --language multilingual --size 100MB
    python -m benches.corpus --language large --size 1GB --info
    python -m benches.corpus --language synthetic --size 10GB   # SIMULATED text, any size
    python -m benches.corpus --list                # every language and its size
    python -m benches.corpus --parallel --info     # parallel text of eight languages

Sizes are decimal: ``1MB`` is 1,000,000 bytes, ``1MiB`` is 1,048,576.
"""

from __future__ import annotations

import argparse
import json
import sys

from benches.corpora.build import BLOCK, manifest  # noqa: F401
from benches.corpora.cache import cache_dir, format_size, parse_size  # noqa: F401
from benches.corpora.catalogs import catalogs, read_mo  # noqa: F401
from benches.corpora.debian import (FETCH_ENV, FetchNotAllowed, Source, _apt,  # noqa: F401
                                    add_fetch_option, apply_fetch_option, unpacked)
from benches.corpora.english import RECIPE, SOURCES, STANDARD_SIZES, _english_all  # noqa: F401
from benches.corpora.large import EXTRA_SOURCES, LARGE_RECIPE  # noqa: F401
from benches.corpora.parallel import (PARALLEL_CODES, PARALLEL_LOCALES,  # noqa: F401
                                      _read_fortunes, help_paragraphs, parallel)
from benches.corpora.paths import available, corpus_path, documents, load  # noqa: F401
from benches.corpora.world import LANGUAGES, WORLD_RECIPE, language_sources  # noqa: F401


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benches.corpus",
        description="Build (once) and print the path of real-text benchmark corpora. They are "
        "cached in $BYTEPAIR_BENCH_CACHE, by default ~/.cache/bytepair-bench in your home "
        "directory.")
    parser.add_argument("--size", action="append", default=[],
                        help="corpus size, e.g. 0.1MB, 10MB, 100MB, or 'all' (every byte of a "
                             "non-English language); repeatable")
    parser.add_argument("--language", default="english", metavar="NAME",
                        help="english (default), multilingual, large, synthetic, "
                             "synthetic-web (simulated: benches/corpora/synthetic.py), or a language: "
                             + ", ".join(LANGUAGES))
    parser.add_argument("--clip", action="store_true",
                        help="a size beyond a language's text gives all of it, not an error")
    parser.add_argument("--corpus", help="use this text file instead of the English recipe")
    parser.add_argument("--rebuild", action="store_true", help="ignore the cache")
    parser.add_argument("--info", action="store_true", help="print the manifest after each path")
    parser.add_argument("--list", action="store_true",
                        help="build every language's text and print its size")
    parser.add_argument("--parallel", action="store_true",
                        help="build the parallel training, dev and held-out text of "
                             + ", ".join(PARALLEL_LOCALES) + " (see parallel()) and print "
                             "its directory; downloads Debian packages (LibreOffice help and "
                             "translations, gcc-12-locales, fortunes-zh) with apt-get download "
                             "into the cache (needs --fetch-corpora)")
    add_fetch_option(parser)
    args = parser.parse_args(argv)
    apply_fetch_option(args)
    if args.parallel:
        try:
            path = parallel()
        except FetchNotAllowed as e:
            parser.error(str(e))
        print(path, flush=True)
        if args.info:
            print((path / "manifest.json").read_text())
        return 0
    if args.list:
        for language in (*LANGUAGES, "multilingual"):
            path = corpus_path(None, language=language)
            m = manifest(path)
            print(f"{language:20} {m['bytes'] / 1e6:9.2f} MB  {m['lines']:>9,} lines  "
                  f"duplicate lines dropped: {m.get('duplicate_line_fraction', 0):.1%}  {path}",
                  flush=True)
        return 0
    sizes = args.size or ([None] if args.corpus else [])
    if not sizes:
        parser.error("give --size (and/or --corpus), or --list")
    for size in sizes:
        if size == "all":
            size = None
        try:
            path = corpus_path(size, args.corpus, rebuild=args.rebuild,
                               language=args.language, clip=args.clip)
        except (ValueError, FetchNotAllowed) as e:
            parser.error(str(e))
        print(path, flush=True)
        if args.info:
            print(json.dumps(manifest(path), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
