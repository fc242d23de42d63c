"""Benchmarking the backends of an XLACustomKernel: configuration, timing, runs and results."""
