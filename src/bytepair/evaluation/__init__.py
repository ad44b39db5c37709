"""Is my tokenizer good? Held-out metrics, vocabulary-size curves, exact checks of the rules, plots."""
