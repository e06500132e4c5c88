"""Chat requests for suite documents, built exactly as lmms-eval's chat models build them: one user
turn holding the images (PNG base64 data URLs, converted to RGB as ``doc_to_visual`` does) and then
the text of ``doc_to_text`` with the suite's prompt kwargs."""

from __future__ import annotations

import base64
import io
from typing import Any

from harness_adapters.lmms_eval.task_functions import doc_to_text
from harness_adapters.suite_docs import PROMPT_KWARGS, SuiteDoc

Messages = list[dict[str, Any]]


class ItemInputError(ValueError):
    """An item whose request cannot be built (e.g. its image does not decode)."""


def image_data_url(path: str) -> str:
    """``data:image/png;base64,...`` of the image at ``path`` (RGB)."""
    from PIL import Image, UnidentifiedImageError

    from primebench_tasks.data.io import check_image_file

    try:
        with Image.open(check_image_file(path)) as im:
            rgb = im.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise ItemInputError(f"image {path} failed to decode: {exc}") from None
    buf = io.BytesIO()
    rgb.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def user_turn(image: str | None, text: str) -> dict[str, Any]:
    """One user turn: the image at ``image`` (if any) as a PNG data URL, then ``text``."""
    content: list[dict[str, Any]] = []
    if image:
        content.append({"type": "image_url", "image_url": {"url": image_data_url(image)}})
    content.append({"type": "text", "text": text})
    return {"role": "user", "content": content}


def chat_messages(doc: SuiteDoc) -> Messages:
    """OpenAI-style messages for one suite document."""
    return [user_turn(doc.doc.get("image"), doc_to_text(doc.doc, PROMPT_KWARGS))]
