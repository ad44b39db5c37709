"""Pieces: the named pre-tokenizer patterns, their dialects for other libraries, the
compiled splitters' front and custom regexes."""
