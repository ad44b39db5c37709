"""Rules: the ordering key and replacement pass, the naive reference trainer, the engines
(incremental over the pair engine, compiled or its Python twin; parity-aware; word mode's),
the merge loop that steps them, SuperBPE's second stage, and the memory budget of learning."""
