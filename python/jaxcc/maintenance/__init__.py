"""Whole-cache operations that touch every stage's state, such as clear_cache."""
