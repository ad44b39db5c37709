"""Rules: the ordering key and replacement pass, the naive reference trainer, the
incremental trainer with its compiled engine and Python twin, word mode's engine, SuperBPE's
second stage, and the memory budget of learning."""
