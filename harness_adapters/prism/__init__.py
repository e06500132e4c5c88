"""PRISM-VLM axes end to end: ``build`` (sample items, build per-axis artifacts with a generator
judge), ``run`` (the evaluated models through the vLLM runner's backends, per-axis budgets, the
sc dialogue), ``score`` (grade, PScore, paired-bootstrap separation, cross-judge audit, report)."""
