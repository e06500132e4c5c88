"""Judges for the PRISM axes: a cached, retrying judge over a local vLLM engine, a vLLM server
or any OpenAI-compatible endpoint (``base.BackendJudge``, ``base.make_judge``)."""
