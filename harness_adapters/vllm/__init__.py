"""vLLM runner: evaluate a base model and its LoRA adapters on a compact suite (one engine per
base model, adapters per request), resumable records, placement on the reference panel, variant
ranking, and a training-loop hook. vLLM is imported only when an offline engine is built."""
