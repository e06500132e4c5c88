"""What an engine may use of the run (#73): the engine protocol and the generation interface,
the request and record types, the run's one loop over a batch of documents (a whole-run engine
such as Ray's replicas records through it) and the one placement of a variant (a training
callback's). Engines import this module only (an import-linter contract holds them to it); the
run never imports an engine — it finds them by entry point (:func:`engines`)."""

from __future__ import annotations

from harness_adapters.run.cpu_setup import require_cpu_ready
from harness_adapters.run.engine import (
    Backend,
    CheckedRun,
    Engine,
    Generation,
    JudgeBackend,
    OpenedModel,
    check_engine,
    engines,
)
from harness_adapters.run.errors import BackendError
from harness_adapters.run.messages import ItemInputError, Messages, chat_messages
from harness_adapters.run.records import RecordFile, RecordRow, records_lock, variant_name
from harness_adapters.run.request import (
    RunRequest,
    RunSpec,
    base_spec,
    run_lock,
)
from harness_adapters.run.session import place_variant
from harness_adapters.run.static_loop import (
    RunSummary,
    failed_record,
    item_fields,
    run_variants,
)
from harness_adapters.run.versions import installed_version
from harness_adapters.suites.documents import SuiteDoc

__all__ = [
    "Backend",
    "BackendError",
    "CheckedRun",
    "Engine",
    "Generation",
    "ItemInputError",
    "JudgeBackend",
    "OpenedModel",
    "Messages",
    "RecordFile",
    "RecordRow",
    "RunRequest",
    "RunSpec",
    "RunSummary",
    "SuiteDoc",
    "base_spec",
    "chat_messages",
    "check_engine",
    "engines",
    "failed_record",
    "installed_version",
    "item_fields",
    "place_variant",
    "records_lock",
    "require_cpu_ready",
    "run_lock",
    "run_variants",
    "variant_name",
]
