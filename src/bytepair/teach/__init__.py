"""The course's companions: a round-by-round trace and the demo."""
