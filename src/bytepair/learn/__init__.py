"""Rules: the ordering key and replacement pass, the naive reference trainer, and the
incremental trainer with its compiled engine and Python twin."""
