"""Markdown tables and plots for people."""
