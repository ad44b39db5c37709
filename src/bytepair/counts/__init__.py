"""Counts: piece tables counted on threads, processes or a Dask cluster, word counts for
word mode, counting under a memory bound (runs spilled to disk), checkpoints, and the
count-table files."""
