"""``MessageBuilder`` joins streamed pieces lazily (``GrowingBlocks``): the message it builds must be the
one the straightforward join-every-piece builder would build, for any order of pieces, calls and
signatures."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ink.ai.assembly import MessageBuilder
from ink.ai.messages import AssistantBlock, TextBlock, ThinkingBlock, ToolCall

Op = tuple[str, str]


class NaiveBuilder:
    """The builder as it was: a new frozen block for every piece."""

    def __init__(self) -> None:
        self.blocks: list[AssistantBlock] = []

    def add_text(self, text: str) -> None:
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, TextBlock):
            self.blocks[-1] = TextBlock(last.text + text)
        else:
            self.blocks.append(TextBlock(text))

    def add_thinking(self, text: str, new_block: bool) -> None:
        last = self.blocks[-1] if self.blocks else None
        if isinstance(last, ThinkingBlock) and not new_block:
            self.blocks[-1] = ThinkingBlock(last.thinking + text, last.signature)
        else:
            self.blocks.append(ThinkingBlock(text))

    def sign(self, signature: str) -> None:
        """Sign the last block when it is thinking, else add an empty signed one."""
        block = self.blocks[-1] if self.blocks else None
        if isinstance(block, ThinkingBlock):
            self.blocks[-1] = ThinkingBlock(block.thinking, (block.signature or "") + signature)
            return
        self.blocks.append(ThinkingBlock("", signature))  # reasoning that streamed no text


ops = st.lists(
    st.tuples(
        st.sampled_from(["text", "thinking", "new_thinking", "call", "sign", "read"]), st.text(max_size=4)
    ),
    max_size=40,
)


@given(ops)
def test_the_lazy_builder_builds_what_the_naive_one_builds(steps: list[Op]) -> None:
    lazy, naive = MessageBuilder("m", "p"), NaiveBuilder()
    for i, (kind, text) in enumerate(steps):
        if kind == "text":
            lazy.add_text(text)
            naive.add_text(text)
        elif kind in ("thinking", "new_thinking"):
            lazy.add_thinking(text, new_block=kind == "new_thinking")
            naive.add_thinking(text, kind == "new_thinking")
        elif kind == "call":
            call = ToolCall(f"c{i}", "read", {"path": text})
            lazy.add_call(call)
            naive.blocks.append(call)
        elif kind == "sign":
            naive.sign(text)
            lazy.sign_thinking(text)
        else:
            assert lazy.blocks == naive.blocks  # reading in the middle changes nothing
    assert lazy.blocks == naive.blocks
    expected = tuple(b for b in naive.blocks if not (isinstance(b, TextBlock) and not b.text))
    assert lazy.message("stop").content == expected
