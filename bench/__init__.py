"""Benchmarks: `python -m bench` (or `make bench`) runs every `bench/*.py` that has a `main()`."""
