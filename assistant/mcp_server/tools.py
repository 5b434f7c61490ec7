"""The tools an AI tool can call: `search_docs` (the passages that pass the project's relevance
gate) and `ask` (an answer with its sources, exactly as the REST ask door gives it).

Both go through the one intake (validation and rate limits; the project was authorised by
app.py) and log an interaction with channel `mcp`, so AI tools' questions show in the metrics
and blind spots. A bad or refused call is a tool error the calling model can read
(`isError`), never a crash.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from channels.db import database_sync_to_async
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from assistant import admission
from assistant.ask import intake, search, services
from assistant.ask.intake import Caller
from assistant.errors import IntakeError
from assistant.models import Interaction, Project

#: Where app.py leaves the authorised project and caller in the ASGI scope.
SCOPE_KEY = "askdocs.mcp"

INSTRUCTIONS = (
    "Search and ask this product's own documentation. Prefer search_docs to read the "
    "relevant passages yourself; ask returns a finished answer with its sources. Both say so "
    "plainly when the documentation does not cover a question: then do not guess."
)

server: MCPServer = MCPServer("askdocs", instructions=INSTRUCTIONS, log_level="WARNING")


class Passage(BaseModel):
    title: str = Field(description="The document's title.")
    heading_path: str = Field(description="The headings above the passage, outermost first.")
    url: str = Field(description="Where to read it, with the anchor of its section.")
    relevance: float | None = Field(description="The cross-encoder's score, 0 to 1.")
    text: str
    curated: bool = Field(default=False, description="An answer the project's team wrote.")


class SearchResult(BaseModel):
    passages: list[Passage] = Field(description="Best first; empty when refused.")
    refused: bool = Field(description="True when no passage passed the relevance gate.")
    refusal_reason: str = Field(description="Why nothing is returned, or empty.")
    best_relevance: float | None
    threshold: float = Field(description="The project's relevance gate.")


class Source(BaseModel):
    n: int = Field(description="The [n] the answer cites it by.")
    title: str
    url: str
    relevance: float | None
    curated: bool = Field(default=False, description="An answer the project's team wrote.")


class Answer(BaseModel):
    answer: str = Field(description="Markdown, citing its sources as [n].")
    refused: bool = Field(description="True when the documentation holds no answer.")
    sources: list[Source]
    conversation_id: str = Field(description="Send it back with a follow-up question.")
    answer_id: str
    generator: str = Field(description="What wrote the answer; empty for a refusal.")
    fallback: str = Field(
        description="Why the project's own generator's text does not stand, as a short code "
        "(busy, unavailable, late, …), or empty."
    )


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


@server.tool(annotations=READ_ONLY)
async def search_docs(query: str, ctx: Context, topic: str = "") -> SearchResult:
    """Search the documentation. Returns the passages relevant enough to answer from (title,
    URL with anchor, heading path, relevance, text), or none with the reason. `topic` narrows
    the search to an area of the product, e.g. "billing"."""
    project, caller = _authorised(ctx)
    return await database_sync_to_async(_search)(project, caller, query, topic)


@server.tool(annotations=READ_ONLY)
async def ask(question: str, ctx: Context, topic: str = "", conversation_id: str = "") -> Answer:
    """Ask the documentation a question and get an answer written only from it, with its
    sources, or a plain refusal when it does not cover the question. Pass the returned
    `conversation_id` to ask a follow-up."""
    project, caller = _authorised(ctx)
    return await database_sync_to_async(_ask)(project, caller, question, topic, conversation_id)


def _authorised(ctx: Context) -> tuple[Project, Caller]:
    request: Any = ctx.request_context.request
    found = request.scope.get(SCOPE_KEY) if request is not None else None
    if found is None:  # only app.py serves this server, and it always authorises first
        raise ToolError("secret_key_required: Authenticate with the project's secret key.")
    return found


def _search(project: Project, caller: Caller, query: str, topic: str) -> SearchResult:
    try:
        asked = intake.retrieve_request(
            {"question": query, "topic": topic}, project=project, caller=caller
        )
        with admission.admit(project.public_key):  # its turn, or busy at once
            found = search.search(asked=asked, channel=Interaction.Channel.MCP)
    except IntakeError as error:
        raise _tool_error(error) from None
    except search.SearchUnavailable as error:
        raise ToolError(f"unavailable: {error}") from None
    return SearchResult(
        passages=[Passage(**asdict(p)) for p in found.passages],
        refused=not found.passages,
        refusal_reason=found.refusal,
        best_relevance=found.best_relevance,
        threshold=found.threshold,
    )


def _ask(
    project: Project, caller: Caller, question: str, topic: str, conversation_id: str
) -> Answer:
    data = {"question": question, "topic": topic, "conversation_id": conversation_id}
    try:
        asked = intake.ask_request(data, project=project, caller=caller)
        # Waits its turn, or busy at once; the slot is given back once the quote is done.
        with admission.admit(project.public_key) as ticket:
            result = services.ask(asked, channel=Interaction.Channel.MCP, on_written=ticket.release)
    except IntakeError as error:
        raise _tool_error(error) from None
    if result.error:
        raise ToolError(f"{result.error}: {result.answer}")
    return Answer(
        answer=result.answer, refused=result.refused,
        sources=[Source(**source) for source in result.sources],
        conversation_id=asked.conversation_id, answer_id=result.answer_id,
        generator=result.generator, fallback=result.fallback,
    )  # fmt: skip


def _tool_error(error: IntakeError) -> ToolError:
    """The intake's code and message, for the calling model to read and act on."""
    return ToolError(f"{error.code}: {error.message}")
