"""Shared ground for every stage: atomic writes and argument checks."""
