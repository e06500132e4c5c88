"""Chat requests for suite documents, built exactly as lmms-eval's chat models build them: one user
turn holding the images (base64 data URLs of the RGB pixels ``doc_to_visual`` gives) and then
the text of ``doc_to_text`` with the suite's prompt kwargs."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from harness_adapters.suites.documents import SuiteDoc

Messages = list[dict[str, Any]]


class ItemInputError(ValueError):
    """An item whose request cannot be built (e.g. its image does not decode)."""


#: formats whose file bytes are sent as they are when the image is already RGB: every decoder
#: (vLLM's, lmms-eval's PIL) gets the very pixels ``convert("RGB")`` would give
PASS_THROUGH = {"JPEG": "image/jpeg", "PNG": "image/png"}


def image_data_url(path: str) -> str:
    """``data:image/...;base64,...`` of the image at ``path``, decoded to RGB pixels as
    lmms-eval's ``doc_to_visual`` does: an RGB JPEG or PNG is sent as its own bytes (fully
    decoded here first, so a file that does not decode fails here), any other image converted
    to RGB and PNG-encoded. Re-encoding every JPEG as PNG gave the same pixels at 25× the cost
    (1.6 s per 100 MATH-Vision images, the runner's overhead: ``benchmarks/ray_scale.py``)."""
    from PIL import Image, UnidentifiedImageError

    from primebench_tasks.data.io import check_image_file

    try:
        with Image.open(check_image_file(path)) as im:
            im.load()
            mime = PASS_THROUGH.get(im.format or "") if im.mode == "RGB" else None
            if mime is None:
                rgb = im.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise ItemInputError(f"image {path} failed to decode: {exc}") from None
    if mime is not None:
        raw = Path(path).read_bytes()
    else:
        buf = io.BytesIO()
        rgb.save(buf, format="PNG")
        raw, mime = buf.getvalue(), "image/png"
    return f"data:{mime};base64," + base64.b64encode(raw).decode("ascii")


def pil_data_url(image: Any) -> str:
    """``data:image/png;base64,...`` of a PIL image's RGB pixels (what an upstream
    ``doc_to_visual`` returns)."""
    buf = io.BytesIO()
    try:
        image.convert("RGB").save(buf, format="PNG")
    except (OSError, ValueError) as exc:
        raise ItemInputError(f"image failed to encode: {exc}") from None
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def user_turn(images: str | list[Any] | None, text: str) -> dict[str, Any]:
    """One user turn: the images (file paths or PIL images, in order) as data URLs, then
    ``text``."""
    if images is None:
        images = []
    elif isinstance(images, str):
        images = [images]
    content: list[dict[str, Any]] = []
    for im in images:
        url = image_data_url(str(im)) if isinstance(im, (str, Path)) else pil_data_url(im)
        content.append({"type": "image_url", "image_url": {"url": url}})
    content.append({"type": "text", "text": text})
    return {"role": "user", "content": content}


def chat_messages(doc: SuiteDoc) -> Messages:
    """OpenAI-style messages for one suite document (its source's images and prompt). An image
    or document that cannot be read is an :class:`ItemInputError` (the item is recorded as
    failed, not dropped)."""
    try:
        images, text = doc.visuals(), doc.text()
    except (OSError, KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ItemInputError):
            raise
        raise ItemInputError(
            f"item {doc.item_id} of {doc.benchmark}: {type(exc).__name__}: {exc}"
        ) from None
    return [user_turn(images, text)]
