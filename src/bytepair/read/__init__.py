"""Documents: files, globs, gzip, lines, JSON Lines, Parquet and URLs, and the blocks
that compiled counting reads, cut only where every pattern agrees."""
