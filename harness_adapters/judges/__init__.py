"""Judges for the PRISM axes: a protocol with an OpenAI-compatible backend (e.g. a local
``vllm serve``) and rule-based graders where the answer space is closed."""
