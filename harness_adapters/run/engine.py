"""What an engine offers a run (docs/architecture.md, "The adapters"): the generation interface
(:class:`Backend`, :class:`Generation`) and the engine protocol (:class:`Engine`, found by entry
point and checked by :func:`check_engine`, as harnesses are by ``check_harness``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from harness_adapters.run.errors import BackendError
from primebench_tasks.errors import ConfigError, PrimeBenchError

if TYPE_CHECKING:
    from harness_adapters.run.messages import Messages
    from harness_adapters.run.records import RecordFile
    from harness_adapters.run.request import RunRequest, RunSpec
    from harness_adapters.run.static_loop import RunSummary
    from harness_adapters.suites.documents import SuiteDoc


class Generation(str):
    """A generated text (a ``str``: every reader of a response takes it as one) that also says
    why generation stopped (``finish_reason``: ``stop``, ``length`` — at the token budget —, or
    None where the engine did not say) and how many tokens it took (``output_tokens``, or
    None). What the run records beside the response, for the response check."""

    finish_reason: str | None
    output_tokens: int | None

    def __new__(
        cls, text: str, finish_reason: str | None = None, output_tokens: int | None = None
    ) -> Generation:
        out = super().__new__(cls, text)
        out.finish_reason = finish_reason
        out.output_tokens = output_tokens
        return out


def generation_facts(out: str) -> dict[str, str | int | None]:
    """``finish_reason`` and ``output_tokens`` of a generated text (None for a plain str)."""
    return {
        "finish_reason": getattr(out, "finish_reason", None),
        "output_tokens": getattr(out, "output_tokens", None),
    }


class Backend(Protocol):
    """What a run asks of an engine (the vLLM engine or server, a Ray replica, a judge's model):
    ``generate(messages, adapter, max_new_tokens=None, regex=None)`` answers each request with
    its text (a :class:`Generation` where the engine says why it stopped) or the exception that
    failed it (a failed item, retried on resume); ``kind`` names
    the engine in the run's spec."""

    kind: str

    def generate(
        self,
        messages: Sequence[Messages],
        adapter: str | None,
        max_new_tokens: int | None = None,
        regex: str | None = None,
    ) -> list[str | Exception]: ...


# ---------------------------------------------------------------------- the engine protocol

ENGINE_GROUP = "primebench.engines"
"""The entry-point group engines are found in (``vllm = harness_adapters.engines.vllm.engine:
ENGINE``); the run never imports an engine."""
DEFAULT_ENGINE = "vllm"
"""The engine ``primebench run`` and ``rank-variants`` use without ``--engine``."""


@dataclass(frozen=True)
class CheckedRun:
    """An engine's answer to a run request, before anything is asked (#73):

    - ``spec``: the run spec to freeze (``run_spec.json``, schema ``primebench.run/1``: the run
      conditions, the adapters and what of each is applied, the prompt and decoding —
      :func:`~harness_adapters.run.request.base_spec` gives its common part); a resume must
      match it;
    - ``start()``: the engine's :class:`Backend`, called only when something is left to ask;
    - ``whole_run(docs, records, progress)``: where the engine runs a whole static request
      itself (vLLM on Ray: its replicas) instead of the run's loop; None: the loop."""

    spec: RunSpec
    start: Callable[[], Backend]
    whole_run: (
        Callable[[Sequence[SuiteDoc], RecordFile, Callable[[str], None] | None], RunSummary] | None
    ) = None


@dataclass(frozen=True)
class JudgeBackend:
    """A model an engine opens for a judge (PRISM's builders and graders, #81): its
    ``backend``, the ``judge_id`` its verdicts are cached under (the model and where it runs:
    two judges never share a cache), whether replies may be held to a pattern (``constrained``:
    vLLM's structured outputs) and whether it is ``served`` (a remote endpoint: the judge's own
    retries stand in for the client's)."""

    backend: Backend
    judge_id: str
    constrained: bool
    served: bool


@dataclass(frozen=True)
class OpenedModel:
    """A model an engine opened outside a run (PRISM's runs, #81): each adapter's record (as a
    run spec keeps it: path, rank, weights, what is applied) and ``start()``, its backend."""

    adapters: dict[str, dict[str, Any]]
    start: Callable[[], Backend]


@runtime_checkable
class Engine(Protocol):
    """What an engine plugs into ``primebench run`` and ``rank-variants`` (static, adaptive, the
    variant race): the loops, the records and the reports are the run's (``harness_adapters.run``).

    - ``name``, ``summary``: how users name it (``--engine NAME``) and one line on it;
    - ``add_options(parser)``: its own options on the run verbs (the run's are there already);
    - ``request_fields(args)``: ``{"engine_args": ...}``, what its options ask for in a type
      the engine owns (opaque to the run: :attr:`~harness_adapters.run.request.RunRequest.engine_args`);
    - ``check(req)``: the model and adapters checked before anything starts, and the
      :class:`CheckedRun` (spec, how to start it, a whole run where it has one);
    - optional ``adapters_served_by_name = True``: ``rank-variants --adapters`` are the names
      the engine serves (an endpoint's), not adapter folders;
    - optional ``judge(kind, target, *, timeout_s, api_key_env, settings)``: a
      :class:`JudgeBackend` for the judge spec ``kind:target`` (``kind`` is the engine's name,
      or ``NAME-MODE``: ``vllm-server``), for PRISM's judges (:func:`judge_engine`);
    - optional ``open_model(model, adapters, engine_args)``: an :class:`OpenedModel`, the model
      and adapters checked and its backend on demand, for PRISM's runs."""

    name: str
    summary: str

    def add_options(self, parser: argparse.ArgumentParser) -> None: ...

    def request_fields(self, args: argparse.Namespace) -> dict[str, Any]: ...

    def check(self, req: RunRequest) -> CheckedRun: ...


def check_engine(obj: Any, where: str) -> Engine:
    """``obj`` if it is an :class:`Engine`; else an error naming ``where`` (its entry point) and
    what it lacks."""
    lacking = [
        a
        for a in ("name", "summary", "add_options", "request_fields", "check")
        if not hasattr(obj, a)
    ]
    if isinstance(obj, type):
        raise PrimeBenchError(
            f"{where} names the class {obj.__name__}, not an engine: the entry point must name "
            f"an instance (e.g. ENGINE = {obj.__name__}())"
        )
    if lacking or not isinstance(obj, Engine):
        raise PrimeBenchError(
            f"{where} is not a PRIMEBench engine: it lacks {', '.join(lacking) or 'nothing'} "
            "(harness_adapters.run.engine.Engine: name, summary, add_options, request_fields, "
            "check)"
        )
    if not isinstance(obj.name, str) or not obj.name:
        raise PrimeBenchError(f"{where}: an engine's name must be a non-empty string")
    return obj


def installed_engines() -> list[Any]:
    """The installed ``primebench.engines`` entry points, each once, sorted (not loaded)."""
    from importlib.metadata import entry_points as installed

    unique = {(e.name, e.value): e for e in installed(group=ENGINE_GROUP)}
    return [unique[k] for k in sorted(unique)]


def engines(entry_points: Sequence[Any] | None = None) -> dict[str, Engine]:
    """Every installed engine by name (``entry_points``: the ones to load instead of the
    installed group, for tests); two of one name, or an object that is not an engine, are errors
    naming the entry point."""
    out: dict[str, Engine] = {}
    for ep in installed_engines() if entry_points is None else entry_points:
        obj = check_engine(ep.load(), f"entry point {ep.name} = {ep.value} ({ENGINE_GROUP})")
        if obj.name in out:
            raise PrimeBenchError(f"two engines are named {obj.name!r} (entry point {ep.value})")
        out[obj.name] = obj
    return out


def engine_named(name: str | None = None) -> Engine:
    """The installed engine ``name`` (default :data:`DEFAULT_ENGINE`); an unknown name is an
    error naming the installed ones. Only the entry points of that name are loaded, so a broken
    engine of another name does not stop this one (naming it gives its error)."""
    if name is not None and not name.strip():
        raise ConfigError(
            f"--engine must name an engine, not {name!r} (default: {DEFAULT_ENGINE}; "
            "installed: "
            + (", ".join(sorted({ep.name for ep in installed_engines()})) or "none")
            + ")"
        )
    want = name or DEFAULT_ENGINE
    every = installed_engines()
    mine = [ep for ep in every if ep.name == want]
    found = engines(mine) if mine else {}
    if want not in found:
        # the names of the entry points, none of them loaded: another broken engine says nothing
        raise ConfigError(
            f"no engine {want!r} is installed (installed: "
            f"{', '.join(sorted({ep.name for ep in every})) or 'none'}); "
            + ("pip install -e '.[vllm]'" if want == DEFAULT_ENGINE else "install its package")
        )
    return found[want]


def request_fields_of(
    engine: Engine, args: argparse.Namespace, allowed: Sequence[str]
) -> dict[str, Any]:
    """``engine.request_fields(args)``, checked: a mapping of ``allowed`` field names (the
    :class:`~harness_adapters.run.request.RunRequest` fields an engine may set); anything else
    is an error naming the engine, before anything starts."""
    got = engine.request_fields(args)
    if not isinstance(got, dict) or not all(isinstance(k, str) for k in got):
        raise PrimeBenchError(
            f"engine {engine.name!r}: request_fields returned {type(got).__name__}, not a "
            "dict of RunRequest field names"
        )
    bad = sorted(set(got) - set(allowed))
    if bad:
        raise PrimeBenchError(
            f"engine {engine.name!r}: request_fields sets {', '.join(bad)}, which are not "
            f"fields an engine may set (one of: {', '.join(sorted(allowed))})"
        )
    return got


def checked_run(engine: Engine, req: RunRequest) -> CheckedRun:
    """``engine.check(req)``, held to the protocol: a :class:`CheckedRun` whose ``start`` is
    callable and whose ``whole_run`` is None or callable; else an error naming the engine,
    before any run file is written."""
    from harness_adapters.run.request import RunSpec

    got = engine.check(req)
    if not isinstance(got, CheckedRun):
        raise PrimeBenchError(
            f"engine {engine.name!r}: check() returned {type(got).__name__}, not a CheckedRun "
            "(harness_adapters.run.plug.CheckedRun: spec, start, whole_run)"
        )
    if not isinstance(got.spec, RunSpec | dict):
        raise PrimeBenchError(
            f"engine {engine.name!r}: check()'s spec is {type(got.spec).__name__}, not a RunSpec"
        )
    if not callable(got.start):
        raise PrimeBenchError(f"engine {engine.name!r}: check()'s start is not callable")
    if got.whole_run is not None and not callable(got.whole_run):
        raise PrimeBenchError(f"engine {engine.name!r}: check()'s whole_run is not callable")
    return replace(
        got,
        start=_held_to(engine.name, got.start, "start", "generate", BACKEND_EXPECTED),
        whole_run=None
        if got.whole_run is None
        else _held_to(engine.name, got.whole_run, "whole_run", "lines", SUMMARY_EXPECTED),
    )


BACKEND_EXPECTED = (
    "a backend (an object whose generate(messages, adapter, ...) answers each request)"
)
SUMMARY_EXPECTED = "the run's summary (harness_adapters.run.static_loop.RunSummary)"


def _held_to(
    name: str, call: Callable[..., Any], what: str, holds: str, expected: str
) -> Callable[..., Any]:
    """``call``, its return held to the protocol: an object with a callable attribute
    ``holds``, else one line naming the engine, ``what`` returned it and the ``expected`` kind
    (an engine whose ``start()`` or ``whole_run`` returned None stopped the run in a
    traceback)."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        got = call(*args, **kwargs)
        if not callable(getattr(got, holds, None)):
            raise PrimeBenchError(
                f"engine {name!r}: {what}() returned {type(got).__name__}, not {expected}"
            )
        return got

    return checked


def checked_answers(outs: Any, asked: int, kind: Any) -> list[str | Exception]:
    """A backend's answers to ``asked`` requests, held to the protocol: a list of exactly
    ``asked`` answers, each a text (``str``) or the exception that failed it; anything else
    stops the run with an error naming the backend (an answer is never guessed, dropped or
    moved to another item)."""
    if not isinstance(outs, list | tuple) or len(outs) != asked:
        n = len(outs) if isinstance(outs, list | tuple) else type(outs).__name__
        raise BackendError(
            f"engine backend {kind!r} returned {n} answers for {asked} requests; an engine "
            "answers every request once, in order"
        )
    bad = [o for o in outs if not isinstance(o, str | Exception)]
    if bad:
        raise BackendError(
            f"engine backend {kind!r} returned an answer of type {type(bad[0]).__name__} "
            f"({bad[0]!r}); an answer is a text or the exception that failed it"
        )
    return list(outs)


def judge_engine(spec: str) -> tuple[Engine, str, str]:
    """The engine a judge spec ``KIND:TARGET`` names (``KIND`` = the engine's name, or
    ``NAME-MODE`` such as ``vllm-server``), its kind and target; an engine that cannot judge, or
    a spec without a target, is an error naming the spec."""
    kind, _, target = spec.partition(":")
    if not kind or not target:
        raise ConfigError(
            f"judge {spec!r}: expected vllm:MODEL_DIR, vllm-server:MODEL@URL, openai:MODEL@URL "
            "(KIND:TARGET of an installed engine that opens judges) or rules"
        )
    engine = engine_named(kind.split("-", 1)[0])
    if not callable(getattr(engine, "judge", None)):
        raise ConfigError(f"judge {spec!r}: engine {engine.name!r} cannot open a judge")
    return engine, kind, target
