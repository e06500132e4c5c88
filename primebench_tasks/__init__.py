"""PRIMEBench: compact VLM evaluation suites that rank models like the full suite.

Importing this package stays light (numpy, scipy, pandas, pyarrow, scikit-learn); torch,
transformers, lmms_eval and vllm are imported only by the code paths that need them.
"""

from primebench_tasks.data.leaderboard import Leaderboard
from primebench_tasks.data.panel import Panel

__version__ = "0.1.0"
__all__ = ["Leaderboard", "Panel", "__version__"]
