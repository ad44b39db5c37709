"""The benchmarks' corpora, one module per source (the command line is benches/corpus.py)."""
