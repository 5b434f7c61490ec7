"""The messages the app posts, as Block Kit blocks (built with slack_sdk's block models): an
answer with its sources and buttons, a refusal with related pages, short notices."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    SectionBlock,
)

from assistant.rag.types import SORRY
from assistant.slack.text import escape, link, mrkdwn, pieces, sources_line

VOTE_UP = "askdocs_vote_up"
VOTE_DOWN = "askdocs_vote_down"
HANDOFF = "askdocs_handoff"
ACTIONS = frozenset({VOTE_UP, VOTE_DOWN, HANDOFF})
MAY_HELP = "These pages may help"
WRITING = "_Writing a fuller answer…_"
#: Slack's limit for a message's notification text.
FALLBACK_LIMIT = 3000


def answer_message(
    *,
    answer: str,
    sources: Sequence[Mapping[str, Any]],
    answer_id: str,
    conversation_id: str,
    handoff: bool,
) -> dict[str, Any]:
    """`text` (notifications, and clients without blocks) and `blocks` of an answer."""
    text = mrkdwn(answer)
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=part)) for part in pieces(text)
    ]
    if line := sources_line(sources):
        blocks.append(SectionBlock(text=MarkdownTextObject(text=line)))
    blocks.append(_buttons(answer_id=answer_id, conversation_id=conversation_id, handoff=handoff))
    return _message(text, blocks)


def writing_message(*, quote: str, sources: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The quote posted at once while a model writes the answer (it replaces this message when
    it is complete): the quote, its sources and a note that more is coming; no buttons yet
    (they name the answer, which is logged when it is done)."""
    message = answer_message(
        answer=quote, sources=sources, answer_id="", conversation_id="", handoff=False
    )
    note = ContextBlock(elements=[MarkdownTextObject(text=WRITING)])
    message["blocks"].append(note.to_dict())
    return message


def refusal_message(
    *,
    related: Sequence[Mapping[str, Any]],
    answer_id: str,
    conversation_id: str,
    handoff: bool,
) -> dict[str, Any]:
    """The sorry-sentence, and the nearest pages when there are any (as the widget offers)."""
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=escape(SORRY)))]
    if line := sources_line(related, heading=MAY_HELP):
        blocks.append(SectionBlock(text=MarkdownTextObject(text=line)))
    blocks.append(_buttons(answer_id=answer_id, conversation_id=conversation_id, handoff=handoff))
    return _message(escape(SORRY), blocks)


def notice_message(text: str, *, url: str = "") -> dict[str, Any]:
    """A short plain notice (busy, unavailable, a handoff's next step), and a link."""
    line = f"{escape(text)} {link(url, url)}" if url else escape(text)
    return _message(line, [ContextBlock(elements=[MarkdownTextObject(text=line)])])


def _buttons(*, answer_id: str, conversation_id: str, handoff: bool) -> ActionsBlock:
    elements = []
    if answer_id:
        elements += [
            ButtonElement(text="👍 Helpful", action_id=VOTE_UP, value=answer_id),
            ButtonElement(text="👎 Not helpful", action_id=VOTE_DOWN, value=answer_id),
        ]
    if handoff:
        elements.append(
            ButtonElement(text="Ask a person", action_id=HANDOFF, value=conversation_id)
        )
    return ActionsBlock(block_id="askdocs_answer", elements=elements)


def _message(text: str, blocks: list[Block]) -> dict[str, Any]:
    kept = [
        block
        for block in blocks
        if not isinstance(block, ActionsBlock) or block.elements  # an empty row is refused
    ]
    return {"text": text[:FALLBACK_LIMIT], "blocks": [block.to_dict() for block in kept]}
