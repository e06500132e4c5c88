"""Ranking-fidelity metrics."""
