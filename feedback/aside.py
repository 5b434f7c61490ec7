"""Requests beside a project's documents although they come near them: a price asked of
documents that state none, another product the documents never name (asked about itself). A
large manual has a passage near almost any question (a database manual's planner "costs" are
near "How much does it cost?"), so nearness alone called these documentation gaps; nothing can
be written into such documents to answer them, so blind spots list them with the off-topic requests.

The question's money words and product names are read as the answerability check reads them
(assistant/rag/judge/unsaid.py); the documents are asked in the database, once per page view
for prices and once per name."""

from __future__ import annotations

import re
from functools import reduce
from operator import or_

from django.db.models import Q

from assistant.rag.judge.unsaid import names
from ingestion.models import Chunk

#: A question about money (the words the answerability check reads as one).
MONEY = re.compile(
    r"\b(price|prices|pricing|priced|cost|costs|cheap|cheaper|cheapest|expensive|fee|fees|"
    r"pay|paid|paying|payment|subscription|discount|bitcoin|crypto)\b|[$€£¥]\s?\d",
    re.IGNORECASE,
)
#: How documents that state prices write them ("12 USD per user per month", "€8/month").
PRICE_MARKERS = ("per month", "/month", "a month per", "per year", "/year", " usd", "pricing")


class DocumentsAsked:
    """What a project's documents say, asked lazily and remembered for one report."""

    def __init__(self, project_id: int) -> None:
        self.chunks = Chunk.objects.filter(document__source__project_id=project_id)
        self._any: bool | None = None
        self._prices: bool | None = None
        self._names: dict[str, bool] = {}

    def exist(self) -> bool:
        if self._any is None:
            self._any = self.chunks.exists()
        return self._any

    def state_prices(self) -> bool:
        if self._prices is None:
            markers = reduce(or_, (Q(text__icontains=m) for m in PRICE_MARKERS))
            self._prices = self.chunks.filter(markers).exists()
        return self._prices

    def name(self, name: str) -> bool:
        if name not in self._names:
            self._names[name] = self.chunks.filter(
                Q(text__icontains=name) | Q(heading_path__icontains=name)
            ).exists()
        return self._names[name]


def aside_reason(question: str, documents: DocumentsAsked) -> str:
    """Why a question is beside the documents ("" when it may be a gap in them)."""
    if not documents.exist():
        return ""  # no documents: nothing to be beside
    if MONEY.search(question) and not documents.state_prices():
        return "a price; the documents state none"
    # Another product: named, never in the documents, and the question is about it ("How much
    # does Slack cost?"), not about this product beside it, which may be a gap: "Do you ship
    # to Antarctica?" asks the vendor, "Can I pay with Bitcoin?" relates it to this product,
    # "Does PostgreSQL read MySQL dumps?" names the documents' own subject.
    named = names(question)
    unnamed = [n for n in named if not documents.name(n)]
    about = [n for n in unnamed if not re.search(rf"\b{_RELATING}\s+{re.escape(n)}\b", question)]
    if about and len(unnamed) == len(named) and not _ADDRESSED.search(question):
        return f"{', '.join(about)}: the documents never name it"
    return ""


_ADDRESSED = re.compile(r"\b(you|your|yours)\b", re.IGNORECASE)
#: Words that relate a name to the product asked about ("pay with Bitcoin", "move from Jira").
_RELATING = r"(?i:with|to|from|into|in|on|via|by|for|through|against|like|than|and|or)"
