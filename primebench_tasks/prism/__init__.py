"""PRISM-VLM axes: scores, PScore aggregation, paired-bootstrap separation and the instruction-
following verifiers (PRISM-VLM paper §3, §5, App. E)."""
