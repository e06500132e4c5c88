"""A tiny, randomly initialised Qwen2-VL and LoRA adapters for it, built locally (no hub).

For smoke tests and benchmarks of the runner: ``primebench tiny-model OUT --adapters 3`` builds a
model that vLLM's CPU and GPU engines load like a real Qwen2-VL checkpoint (chat template, image
processor, video processor) and peft LoRA adapters (``q_proj``/``v_proj``) that change its greedy
outputs.  Recipe and sizes: ../shared/notes/vllm_cpu.md (head size 32 is the smallest vLLM's CPU
attention supports).  Needs the ``vllm`` extra (torch, transformers, tokenizers, peft); about 7 s.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _corpus(n: int = 400) -> list[str]:
    """Deterministic training lines for the byte-level BPE (digits, letters, option words)."""
    words = [
        "answer",
        "question",
        "option",
        "number",
        "image",
        "the",
        "with",
        "letter",
        "choices",
        "given",
        "directly",
        "what",
        "is",
        "of",
        "area",
        "angle",
        "triangle",
        "circle",
        "length",
        "A",
        "B",
        "C",
        "D",
        "E",
    ]
    lines = []
    for i in range(n):
        ws = [words[(i * 7 + j * 3) % len(words)] for j in range(6 + i % 5)]
        lines.append(" ".join(ws) + f" {i % 97} {(i * 13) % 1000}.{i % 10}")
    return lines


#: model sizes: ``tiny`` (≈ 0.6 M parameters, float32, CI) and ``2b`` (Qwen2-VL-2B's shapes:
#: text 1536 × 28 layers, vision 1280 × 32 blocks; ≈ 2.1 B parameters with this small vocabulary,
#: bfloat16; the GPU check, benchmarks/gpu_check.py)
SIZES: dict[str, dict] = {
    "tiny": {
        "text": dict(
            hidden_size=128,
            intermediate_size=256,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        ),
        "mrope": [4, 6, 6],
        "vision": dict(depth=1, embed_dim=64, hidden_size=128, num_heads=2, mlp_ratio=2),
        "max_pixels": 28 * 28 * 64,
        "dtype": "float32",
    },
    "2b": {
        "text": dict(
            hidden_size=1536,
            intermediate_size=8960,
            num_hidden_layers=28,
            num_attention_heads=12,
            num_key_value_heads=2,
        ),
        "mrope": [16, 24, 24],
        "vision": dict(depth=32, embed_dim=1280, hidden_size=1536, num_heads=16, mlp_ratio=4),
        "max_pixels": 28 * 28 * 256,
        "dtype": "bfloat16",
    },
}


def build_tiny_qwen2vl(out: str | Path, seed: int = 0, size: str = "tiny") -> Path:
    """Write a Qwen2-VL of ``size`` (:data:`SIZES`; random weights, seed ``seed``) with its
    tokenizer and processor to ``out``; returns ``out``.  Same seed → same weights."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessorPil,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=420,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:],
        chat_template=CHAT_TEMPLATE,
    )
    ids: dict[str, int] = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}  # type: ignore[misc]
    spec = SIZES[size]
    config = Qwen2VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            **spec["text"],
            max_position_embeddings=32768 if size != "tiny" else 2048,
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=ids["<|im_end|>"],
            pad_token_id=ids["<|endoftext|>"],
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 1e6,
                "mrope_section": spec["mrope"],
            },
        ),
        vision_config=dict(
            **spec["vision"], patch_size=14, spatial_merge_size=2, temporal_patch_size=2
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config).eval().to(getattr(torch, spec["dtype"]))
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.save_pretrained(out)
    pixels = {"shortest_edge": 56 * 56, "longest_edge": spec["max_pixels"]}
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessorPil(size=pixels),
        video_processor=Qwen2VLVideoProcessor(size=pixels),
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


#: adapter targets: ``language`` (``q_proj``/``v_proj`` of the text model: vLLM applies these
#: with plain ``enable_lora``) and ``all-linear`` (peft's every linear layer: vision tower blocks,
#: the ``visual.merger`` connector and the text model — as real VLM fine-tunes often are; vLLM
#: applies the vision part only with ``enable_tower_connector_lora``)
ADAPTER_TARGETS: dict[str, str] = {
    "language": r"^(?!.*visual).*\.(q_proj|v_proj)$",
    "all-linear": "all-linear",
}


def build_lora_adapter(
    base: str | Path,
    out: str | Path,
    seed: int,
    r: int = 8,
    scale: float = 2.0,
    targets: str = "language",
) -> Path:
    """Write a peft LoRA adapter (rank ``r`` on the modules of :data:`ADAPTER_TARGETS`
    ``[targets]``) for ``base`` with random A and B (B is zero in a fresh adapter, which would
    change nothing) of standard deviation ``scale / r``; returns ``out``."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen2VLForConditionalGeneration

    model = Qwen2VLForConditionalGeneration.from_pretrained(base, dtype="auto")
    if targets not in ADAPTER_TARGETS:
        raise ValueError(f"targets {targets!r}: one of {sorted(ADAPTER_TARGETS)}")
    cfg = LoraConfig(
        r=r, lora_alpha=2 * r, lora_dropout=0.0, target_modules=ADAPTER_TARGETS[targets]
    )
    peft_model = get_peft_model(model, cfg)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * (scale / r))
    peft_model.save_pretrained(str(out))
    return Path(out)
