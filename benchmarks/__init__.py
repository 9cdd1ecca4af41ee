"""Runnable benchmarks for owlai-refine: scripts that print figures, never timed tests.

Run each from the repository root as ``python -m benchmarks.NAME`` (see benchmarks/README.md).
Every figure is a ratio of two things measured in the same run, so that a shared, noisy machine
moves both sides together; timings are the minimum or median of several repeats, as each script
says.
"""
