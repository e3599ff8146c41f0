"""Benchmarks of the working-tree snapshots behind rewind and undo."""
