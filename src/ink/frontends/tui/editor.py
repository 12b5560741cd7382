"""The input editor's text operations that carry a rule: restored input goes back in order (R22, R30)."""

from __future__ import annotations

from collections.abc import Sequence

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document

from ink.frontends.tui.mentions import typed_part


def merge_restored(restored: Sequence[str], typing: str) -> str:
    """R30: restored inputs come back in submission order, one paragraph each, *before* whatever the user
    is typing, which is kept."""
    parts = [typed_part(text).strip("\n") for text in restored]  # attachments go again when re-sent
    if typing.strip():
        parts.append(typing)
    return "\n\n".join(parts)


def restore_into(buffer: Buffer, restored: Sequence[str]) -> None:
    """Put restored inputs into ``buffer``; the cursor goes where the user was typing (the end)."""
    if not restored:
        return
    text = merge_restored(restored, buffer.text)
    buffer.set_document(Document(text, len(text)), bypass_readonly=True)


def replace_text(buffer: Buffer, text: str) -> None:
    buffer.set_document(Document(text, len(text)), bypass_readonly=True)
