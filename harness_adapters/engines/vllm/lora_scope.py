"""What a LoRA adapter changes in a VLM, and whether the engine will apply all of it.

vLLM applies LoRA to the language model only unless the engine runs with
``enable_tower_connector_lora`` (``vllm serve --enable-tower-connector-lora``) *and* the model's
vLLM class supports it (``supports_tower_connector_lora``: Qwen2-VL, Qwen2.5-VL, Qwen3-VL, LLaVA,
InternVL, Idefics3, ... in vLLM 0.32). Otherwise an adapter trained on every linear layer (peft
``target_modules="all-linear"``, tower and connector included) loads without complaint and its
vision-tower and connector matrices are silently not applied: the answers are neither the base
model's nor the adapter's. Measured on the tiny Qwen2-VL (``tests/harness/test_lora_reference.py``).

So each adapter is read before any engine starts (its tensor names: peft writes
``base_model.model.<module>.lora_A.weight``), every module is sorted into the language model,
the vision tower or the connector — by the model's own vLLM mapping (``hf_to_vllm_mapper`` and
``get_mm_mapping``) when vLLM is installed, else by the module-name rules below — and a
:class:`LoraPlan` says how the engine must run:

- language-model modules only: as always;
- tower or connector modules: the engine runs with tower/connector LoRA where the model supports
  it; where it does not, the run is refused with a message naming the modules and the option
  ``--lora-language-model-only``, which accepts the adapter with only its language-model part
  applied (the report says so for that variant).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_adapters.run.plug import BackendError, variant_name

LANGUAGE, TOWER, CONNECTOR = "language", "tower", "connector"

#: module-name parts of vision towers (used when vLLM's own mapping is not available)
TOWER_PARTS = frozenset(
    {"visual", "vision_tower", "vision_model", "vision_encoder", "image_encoder", "vit", "vision"}
)
#: module-name parts of connectors (checked before the tower: Qwen2-VL's is ``visual.merger``)
CONNECTOR_PARTS = frozenset(
    {"merger", "multi_modal_projector", "mm_projector", "mlp1", "connector", "aligner"}
)

LANGUAGE_ONLY_OPTION = "--lora-language-model-only"


def _tensor_names(path: Path) -> list[str]:
    st, binf = path / "adapter_model.safetensors", path / "adapter_model.bin"
    if st.exists():
        with open(st, "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(n))
        return [k for k in header if k != "__metadata__"]
    if binf.exists():
        import torch

        return list(torch.load(binf, map_location="cpu", weights_only=True))
    raise BackendError(
        f"adapter {path}: neither adapter_model.safetensors nor adapter_model.bin exists"
    )


def adapter_modules(path: str | Path) -> list[str]:
    """The modules a peft LoRA adapter at ``path`` changes, by the base model's names
    (``model.visual.blocks.0.attn.qkv``, ...), sorted."""
    mods = set()
    for key in _tensor_names(Path(path)):
        name = key.removeprefix("base_model.model.")
        cut = name.find(".lora_")
        if cut < 0:
            continue  # e.g. modules_to_save copies: not LoRA factors
        mods.add(name[:cut])
    return sorted(mods)


def rule_kind(module: str) -> str:
    """LANGUAGE, TOWER or CONNECTOR by the module-name rules (:data:`CONNECTOR_PARTS` first)."""
    parts = set(module.split("."))
    if parts & CONNECTOR_PARTS:
        return CONNECTOR
    if parts & TOWER_PARTS:
        return TOWER
    return LANGUAGE


@dataclass(frozen=True)
class ModelLoraSupport:
    """What the engine can apply for a base model: its architecture, whether its vLLM class
    supports tower/connector LoRA (None: unknown, vLLM not installed here or the architecture not
    in vLLM) and a classifier of module names (vLLM's mapping, else :func:`rule_kind`)."""

    architecture: str | None
    tower_lora: bool | None
    kind_of: Callable[[str], str] = field(default=rule_kind, compare=False, repr=False)
    source: str = "name rules"


def _base_config(model: Path | str) -> dict[str, Any]:
    if isinstance(model, Path):
        path: Path | None = model / "config.json"
    else:
        try:
            from huggingface_hub import try_to_load_from_cache

            hit = try_to_load_from_cache(model, "config.json")
        except Exception:  # noqa: BLE001 - no hub library or an invalid id: nothing cached
            hit = None
        path = Path(hit) if isinstance(hit, str) else None
    if path is None or not path.exists():
        return {}
    return json.loads(path.read_text("utf-8"))


def model_lora_support(model: Path | str) -> ModelLoraSupport:
    """:class:`ModelLoraSupport` for the base model (a directory or cached repo id)."""
    archs = _base_config(model).get("architectures") or []
    arch = archs[0] if archs else None
    if arch is None:
        return ModelLoraSupport(None, None)
    try:
        from vllm.model_executor.models import ModelRegistry

        # vLLM has no public lookup of a model class by architecture without a ModelConfig;
        # this private one is guarded: any failure falls back to the name rules
        cls: Any = ModelRegistry._try_load_model_cls(arch)
    except Exception:  # noqa: BLE001 - vLLM missing or its internals changed
        return ModelLoraSupport(arch, None)
    if cls is None:
        return ModelLoraSupport(arch, None)
    tower_lora = bool(getattr(cls, "supports_tower_connector_lora", False))
    try:
        keys = cls.get_mm_mapping(None)  # the implementations do not use self
        mapper = getattr(cls, "hf_to_vllm_mapper", None)
        towers = [p.rstrip(".") + "." for p in keys.tower_model]
        connectors = [p.rstrip(".") + "." for p in keys.connector]
    except Exception:  # noqa: BLE001 - no multimodal mapping: the name rules decide
        return ModelLoraSupport(arch, tower_lora)

    def kind_of(module: str) -> str:
        name = module
        if mapper is not None:
            mapped = mapper._map_name(module)
            name = mapped if mapped is not None else module
        name += "."
        if any(name.startswith(p) for p in connectors):
            return CONNECTOR
        if any(name.startswith(p) for p in towers):
            return TOWER
        return LANGUAGE

    return ModelLoraSupport(arch, tower_lora, kind_of, f"vLLM's mapping for {arch}")


@dataclass(frozen=True)
class AdapterScope:
    """The modules of one adapter by part of the model."""

    name: str
    path: Path
    language: tuple[str, ...]
    tower: tuple[str, ...]
    connector: tuple[str, ...]

    @property
    def touches_vision(self) -> bool:
        return bool(self.tower or self.connector)

    def vision_summary(self, shown: int = 3) -> str:
        """e.g. ``4 vision-tower modules (model.visual.blocks.0.attn.qkv, ...) and 2 connector
        modules (...)``."""
        out = []
        for label, mods in (("vision-tower", self.tower), ("connector", self.connector)):
            if mods:
                more = ", ..." if len(mods) > shown else ""
                out.append(f"{len(mods)} {label} modules ({', '.join(mods[:shown])}{more})")
        return " and ".join(out)


def inspect_adapter(name: str, path: str | Path, support: ModelLoraSupport) -> AdapterScope:
    """The :class:`AdapterScope` of the adapter at ``path``."""
    by: dict[str, list[str]] = {LANGUAGE: [], TOWER: [], CONNECTOR: []}
    for m in adapter_modules(path):
        by[support.kind_of(m)].append(m)
    return AdapterScope(
        name, Path(path), tuple(by[LANGUAGE]), tuple(by[TOWER]), tuple(by[CONNECTOR])
    )


@dataclass(frozen=True)
class LoraPlan:
    """How the engine must run for a set of adapters: ``tower_lora`` (enable vLLM's
    tower/connector LoRA) and, per adapter, what is applied."""

    tower_lora: bool
    scopes: Mapping[str, AdapterScope]
    language_only: frozenset[str] = frozenset()
    """adapters applied without their vision part (``--lora-language-model-only``)"""
    notes: Mapping[str, str] = field(default_factory=dict)
    """adapter → a line for the report (part applied, not verified, not inspected)"""

    def spec(self) -> dict[str, Any]:
        """For run_spec.json: per adapter, what it changes and what is applied."""
        return {
            name: {
                "modules": {
                    LANGUAGE: len(s.language),
                    TOWER: len(s.tower),
                    CONNECTOR: len(s.connector),
                },
                "applied": "language model only"
                if name in self.language_only
                else ("language model, vision tower and connector" if s.touches_vision else "all"),
            }
            for name, s in sorted(self.scopes.items())
        }

    def variant_notes(self, model_name: str) -> dict[str, list[str]]:
        """variant → report lines (:attr:`notes`)."""

        return {variant_name(model_name, a): [line] for a, line in sorted(self.notes.items())}


def plan_lora(
    scopes: Mapping[str, AdapterScope],
    support: ModelLoraSupport,
    *,
    language_only: bool = False,
    where: str = "the offline engine",
) -> LoraPlan:
    """The :class:`LoraPlan` for ``scopes`` on a model with ``support``; raises
    :class:`BackendError` for adapters whose tower/connector part cannot be applied (unless
    ``language_only``), naming the modules and the option."""
    vision = {n: s for n, s in scopes.items() if s.touches_vision}
    if not vision:
        return LoraPlan(False, dict(scopes))
    if language_only:
        notes = {
            n: f"adapter {n}: only its language-model part is applied "
            f"({LANGUAGE_ONLY_OPTION}); not applied: {s.vision_summary()}"
            for n, s in vision.items()
        }
        return LoraPlan(False, dict(scopes), frozenset(vision), notes)
    if support.tower_lora:
        return LoraPlan(True, dict(scopes))
    why = (
        f"vLLM's class for {support.architecture} does not support tower/connector LoRA"
        if support.tower_lora is False
        else f"cannot tell whether vLLM supports tower/connector LoRA for "
        f"{support.architecture or 'this model (config.json has no architectures)'} "
        "(vLLM is not installed here or does not know the architecture)"
    )
    lines = "; ".join(f"{n} changes {s.vision_summary()}" for n, s in sorted(vision.items()))
    raise BackendError(
        f"{where} would apply these adapters without their vision part, and score neither the "
        f"base model nor the adapter: {lines}. {why}, so vLLM's enable_tower_connector_lora "
        f"(vllm serve --enable-tower-connector-lora) cannot apply them. Pass "
        f"{LANGUAGE_ONLY_OPTION} to run them with only their language-model part applied "
        "(the report says so), or merge the adapter into the model and run it as a full model"
    )


def check_adapters(
    adapters: Mapping[str, str | Path],
    model: Path | str,
    *,
    language_only: bool = False,
    where: str = "the offline engine",
) -> LoraPlan:
    """Inspect every adapter against the base model and plan the engine (see module doc)."""
    if not adapters:
        return LoraPlan(False, {})
    support = model_lora_support(model)
    scopes = {n: inspect_adapter(n, p, support) for n, p in adapters.items()}
    return plan_lora(scopes, support, language_only=language_only, where=where)


@dataclass(frozen=True)
class ServerLora:
    """What a vLLM server says about itself in ``/server_info`` (served only with
    ``VLLM_SERVER_DEV_MODE=1``): tower/connector LoRA on or off (None: it does not say) and
    the model it serves (its path or repo id; None: unknown)."""

    tower_lora: bool | None
    model: str | None


def server_lora(base_url: str, timeout_s: float = 10.0) -> ServerLora:
    """:class:`ServerLora` of the vLLM server at ``base_url`` (``http://HOST:PORT/v1``)."""
    import urllib.error
    import urllib.request

    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(  # noqa: S310 - the user's own server URL
            root + "/server_info?config_format=json", timeout=timeout_s
        ) as r:
            info = json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return ServerLora(None, None)
    cfg = info.get("vllm_config") if isinstance(info, dict) else None
    if not isinstance(cfg, dict):
        return ServerLora(None, None)
    model_cfg = cfg.get("model_config")
    model = model_cfg.get("model") if isinstance(model_cfg, dict) else None
    lora = cfg.get("lora_config")
    on = bool(lora.get("enable_tower_connector_lora")) if isinstance(lora, dict) else False
    return ServerLora(on, model if isinstance(model, str) else None)


def check_server_adapters(
    adapters: Mapping[str, str | Path],
    base_url: str,
    *,
    model: Path | str | None = None,
    language_only: bool = False,
    server_tower_lora_asserted: bool = False,
) -> LoraPlan:
    """:func:`check_adapters` for adapters served by a running vLLM server: tower/connector
    adapters need a server started with ``--enable-lora --enable-tower-connector-lora`` on a model
    whose vLLM class supports it — read from the server's ``/server_info`` when it serves one
    (``VLLM_SERVER_DEV_MODE=1``), else taken from ``server_tower_lora_asserted`` (the user's
    ``--server-tower-lora``; the report says it was not verified). Adapters whose folder is not
    visible here cannot be inspected and are planned as they are (the report says so)."""
    visible = {n: p for n, p in adapters.items() if (Path(p) / "adapter_config.json").exists()}
    unseen = {
        n: f"adapter {n}: its folder {p} is not visible here, so what it changes was not checked"
        for n, p in adapters.items()
        if n not in visible
    }
    if not visible:
        return LoraPlan(False, {}, notes=unseen)
    info = server_lora(base_url)
    if model is None and info.model is not None:
        local = Path(info.model)
        model = local if (local / "config.json").exists() else info.model
    support = model_lora_support(model) if model is not None else ModelLoraSupport(None, None)
    scopes = {n: inspect_adapter(n, p, support) for n, p in visible.items()}
    where = f"the server {base_url}"
    vision = {n: s for n, s in scopes.items() if s.touches_vision}
    if not vision or language_only:
        plan = plan_lora(scopes, support, language_only=language_only, where=where)
        return LoraPlan(plan.tower_lora, plan.scopes, plan.language_only, {**plan.notes, **unseen})
    if info.tower_lora:
        # the server has it on; the model must support it too (vLLM ignores it otherwise)
        refused = plan_lora(scopes, support, where=where) if support.tower_lora is False else None
        return LoraPlan(True, scopes, notes=unseen) if refused is None else refused
    if info.tower_lora is None and server_tower_lora_asserted:
        notes = {
            n: f"adapter {n}: the server's tower/connector LoRA was asserted with "
            "--server-tower-lora, not verified (the server serves no /server_info)"
            for n in vision
        }
        return LoraPlan(True, scopes, notes={**notes, **unseen})
    lines = "; ".join(f"{n} changes {s.vision_summary()}" for n, s in sorted(vision.items()))
    state = (
        "runs without tower/connector LoRA (its /server_info says so)"
        if info.tower_lora is False
        else "does not say whether it runs with tower/connector LoRA (no /server_info: start it "
        "with VLLM_SERVER_DEV_MODE=1, or pass --server-tower-lora if you started it with the "
        "flag)"
    )
    raise BackendError(
        f"the server {base_url} {state}, and these adapters have a vision part it would not "
        f"apply: {lines}. Start it with `vllm serve MODEL --enable-lora "
        "--enable-tower-connector-lora --lora-modules NAME=PATH ...` (a model whose vLLM class "
        f"supports it, e.g. Qwen2-VL), or pass {LANGUAGE_ONLY_OPTION} to accept only their "
        "language-model part"
    )
