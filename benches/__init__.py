"""Benchmarks of bytepair: real-text corpora, pytest-benchmark cases and a report script.

Not part of the installed package and not collected by the normal test run
(pytest's ``testpaths`` is ``tests``); run ``python -m pytest benches/`` or
``python -m benches.report`` (``--suite peers`` for the peers). See docs/benchmarks.md.
"""
