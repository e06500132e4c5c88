"""What an adapter changes (language model, vision tower, connector) and how the engine must run
for it: adapters written here with peft's tensor names, checked without starting any engine."""

from __future__ import annotations

import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from harness_adapters.engines.vllm.lora_scope import (
    CONNECTOR,
    LANGUAGE,
    TOWER,
    ModelLoraSupport,
    adapter_modules,
    check_adapters,
    check_server_adapters,
    inspect_adapter,
    model_lora_support,
    plan_lora,
    rule_kind,
    server_lora,
)
from harness_adapters.run.errors import BackendError
from tests.extras import requires

LM = "model.language_model.layers.0.self_attn.q_proj"
TOWER_MOD = "model.visual.blocks.0.attn.qkv"
MERGER = "model.visual.merger.mlp.0"


def _adapter(path: Path, modules: list[str]) -> Path:
    """A peft-layout adapter changing ``modules`` (rank 2, zero weights)."""
    path.mkdir(parents=True)
    (path / "adapter_config.json").write_text(json.dumps({"r": 2, "target_modules": ["x"]}))
    header: dict = {"__metadata__": {"format": "pt"}}
    off = 0
    for m in modules:
        for f in ("lora_A", "lora_B"):
            header[f"base_model.model.{m}.{f}.weight"] = {
                "dtype": "F32",
                "shape": [2, 2],
                "data_offsets": [off, off + 16],
            }
            off += 16
    raw = json.dumps(header).encode()
    (path / "adapter_model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(off))
    return path


def _model(path: Path, arch: str) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"architectures": [arch]}))
    return path


def test_modules_are_read_from_the_tensor_names(tmp_path):
    a = _adapter(tmp_path / "a", [TOWER_MOD, LM, MERGER])
    assert adapter_modules(a) == sorted([TOWER_MOD, LM, MERGER])


def test_name_rules_sort_language_tower_and_connector():
    assert rule_kind(LM) == LANGUAGE
    assert rule_kind(TOWER_MOD) == TOWER
    assert rule_kind(MERGER) == CONNECTOR  # inside visual, but the connector
    assert rule_kind("vision_tower.vision_model.encoder.layers.0.self_attn.q_proj") == TOWER
    assert rule_kind("multi_modal_projector.linear_1") == CONNECTOR
    assert rule_kind("language_model.model.layers.3.mlp.down_proj") == LANGUAGE


def test_language_only_adapters_run_as_before(tmp_path):
    a = _adapter(tmp_path / "a", [LM])
    plan = plan_lora(
        {"a": inspect_adapter("a", a, ModelLoraSupport(None, None))}, ModelLoraSupport(None, None)
    )
    assert not plan.tower_lora and not plan.notes
    assert plan.spec()["a"] == {
        "modules": {LANGUAGE: 1, TOWER: 0, CONNECTOR: 0},
        "applied": "all",
    }


def test_a_tower_adapter_enables_tower_lora_where_the_model_supports_it(tmp_path):
    a = _adapter(tmp_path / "a", [LM, TOWER_MOD, MERGER])
    support = ModelLoraSupport("Qwen2VLForConditionalGeneration", True)
    plan = plan_lora({"a": inspect_adapter("a", a, support)}, support)
    assert plan.tower_lora and not plan.notes
    assert plan.spec()["a"]["applied"] == "language model, vision tower and connector"


@pytest.mark.parametrize("tower_lora", [False, None])
def test_a_tower_adapter_is_refused_where_it_cannot_be_applied(tmp_path, tower_lora):
    a = _adapter(tmp_path / "a", [LM, TOWER_MOD, MERGER])
    support = ModelLoraSupport("SomeVLM", tower_lora)
    scopes = {"a": inspect_adapter("a", a, support)}
    with pytest.raises(BackendError) as err:
        plan_lora(scopes, support)
    msg = str(err.value)
    assert "1 vision-tower modules (model.visual.blocks.0.attn.qkv)" in msg
    assert "1 connector modules (model.visual.merger.mlp.0)" in msg
    assert "--lora-language-model-only" in msg and "enable_tower_connector_lora" in msg
    # accepted on request, and the plan says what was left out
    plan = plan_lora(scopes, support, language_only=True)
    assert not plan.tower_lora and plan.language_only == {"a"}
    assert "only its language-model part is applied" in plan.notes["a"]
    assert plan.spec()["a"]["applied"] == "language model only"
    assert plan.variant_notes("m") == {"m+a": [plan.notes["a"]]}


@requires("vllm", "vllm")
def test_vllm_mapping_and_support_of_real_architectures(tmp_path):
    qwen = model_lora_support(_model(tmp_path / "qwen", "Qwen2VLForConditionalGeneration"))
    assert qwen.tower_lora is True and qwen.source.startswith("vLLM's mapping")
    assert qwen.kind_of(TOWER_MOD) == TOWER and qwen.kind_of(MERGER) == CONNECTOR
    assert qwen.kind_of(LM) == LANGUAGE
    # LLaVA-OneVision's vLLM class has no tower/connector LoRA in vLLM 0.32
    ov = model_lora_support(_model(tmp_path / "ov", "LlavaOnevisionForConditionalGeneration"))
    assert ov.tower_lora is False
    assert model_lora_support(_model(tmp_path / "x", "NoSuchArch")).tower_lora is None


@requires("vllm", "vllm")
def test_refused_before_any_engine_on_a_model_without_tower_lora(tmp_path):
    model = _model(tmp_path / "ov", "LlavaOnevisionForConditionalGeneration")
    a = _adapter(
        tmp_path / "ft", ["vision_tower.vision_model.encoder.layers.0.self_attn.q_proj", LM]
    )
    with pytest.raises(
        BackendError, match=r"LlavaOnevisionForConditionalGeneration does not support"
    ):
        check_adapters({"ft": a}, model)


class _Info(BaseHTTPRequestHandler):
    body: bytes | None = None

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def info_server():
    """A stand-in for a server's /server_info (a misconfigured server is a fault to provoke
    cheaply; the real dev-mode server is read in test_lora_reference.py)."""
    srv = HTTPServer(("127.0.0.1", 0), _Info)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv, f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()


def test_server_checks(tmp_path, info_server):
    srv, url = info_server
    a = _adapter(tmp_path / "a", [LM, TOWER_MOD])
    _Info.body = None  # no /server_info (not in dev mode)
    assert server_lora(url).tower_lora is None
    with pytest.raises(BackendError, match=r"does not say.*--server-tower-lora"):
        check_server_adapters({"a": a}, url)
    plan = check_server_adapters({"a": a}, url, server_tower_lora_asserted=True)
    assert plan.tower_lora and "not verified" in plan.notes["a"]
    _Info.body = json.dumps(
        {
            "vllm_config": {
                "model_config": {"model": "x"},
                "lora_config": {"enable_tower_connector_lora": False},
            }
        }
    ).encode()
    with pytest.raises(BackendError, match=r"runs without tower/connector LoRA"):
        check_server_adapters({"a": a}, url, server_tower_lora_asserted=True)
    plan = check_server_adapters({"a": a}, url, language_only=True)
    assert plan.language_only == {"a"}
    # a folder not visible here is run as it is, and the report says it was not checked
    plan = check_server_adapters({"far": tmp_path / "elsewhere"}, url)
    assert "not visible here" in plan.notes["far"]
