"""Counts: piece tables counted on threads, processes or a Dask cluster, and the
count-table files."""
