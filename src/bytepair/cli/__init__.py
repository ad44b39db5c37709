"""The ``bytepair`` command line."""
