"""Versioned judge prompts (the version is part of every cache key)."""

from __future__ import annotations

PROMPTS: dict[str, tuple[str, str]] = {
    # name: (version, template)
    "grade_q": ("grade_q/v1",
                "You grade an answer to a benchmark question. Question: {question}\n"
                "Gold answer: {gold}\nModel answer: {answer}\n"
                'Reply with JSON only: {{"correct": true}} or {{"correct": false}}.'),
    "grade_h": ("grade_h/v1",
                "The question below contains a trap ({trap}). A good answer refuses the false "
                "premise or says it cannot tell. Question: {question}\nModel answer: {answer}\n"
                'Reply with JSON only: {{"correct": true}} or {{"correct": false}}.'),
}


def render(name: str, **fields: str) -> tuple[str, str]:
    """(prompt version, rendered text)."""
    version, template = PROMPTS[name]
    return version, template.format(**fields)
