"""Adapters between PRIMEBench suites and evaluation harnesses; heavy packages are imported lazily."""
