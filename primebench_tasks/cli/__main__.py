"""``python -m primebench_tasks.cli``: the ``primebench`` command."""

import sys

from primebench_tasks.cli.main import main

sys.exit(main())
