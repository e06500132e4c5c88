"""The seven PRISM-VLM axes in the paper's order (pure Python: the CLI lists them in ``--help``)."""

AXES = ("q", "if", "h", "mq", "sc", "c", "vis")
