"""Approved support answers: from Discord and Intercom through their public HTTP APIs with the
admin's token, or from answers imported (JSON/CSV) or pushed by webhook. Every answer is
scrubbed of names, @mentions, e-mail addresses and phone numbers before it goes further.

- Discord: each message in the approved-answers channel is an answer (with
  `approved_reaction` set, only messages carrying that reaction); a reply's question is the
  message it replies to. Deleting the message or removing the reaction un-approves it.
- Intercom: conversations carrying the approval tag; the customer's opening message is the
  question and the teammates' replies are the answer. Removing the tag un-approves it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import lxml.html

from ingestion.connectors.base import ConnectorError, Fetched, Gone, Item, Total
from ingestion.models import Source, SupportAnswer
from ingestion.scrub import scrub
from ingestion.services import IncomingDocument

DISCORD_API = "https://discord.com/api/v10"
INTERCOM_API = "https://api.intercom.io"
TIMEOUT = httpx.Timeout(20.0, connect=5.0)


def support_connector(source: Source) -> DiscordConnector | IntercomConnector | ImportedAnswers:
    config = source.config or {}
    provider = config.get("provider", "import")
    if provider == "discord":
        return DiscordConnector(
            token=_required(config, "token"),
            channel_id=_required(config, "channel_id"),
            approved_reaction=config.get("approved_reaction", ""),
            api_base=config.get("api_base", DISCORD_API),
        )
    if provider == "intercom":
        return IntercomConnector(
            token=_required(config, "token"),
            tag=_required(config, "tag"),
            api_base=config.get("api_base", INTERCOM_API),
        )
    if provider == "import":
        return ImportedAnswers(source)
    raise ConnectorError(f"Unknown support provider {provider!r} (discord, intercom, import)")


def answer_document(
    *, external_id: str, question: str, answer: str, names: list[str], url: str = ""
) -> IncomingDocument:
    question = scrub(question, names=names)
    answer = scrub(answer, names=names)
    title = question.splitlines()[0][:200] if question else "Support answer"
    text = f"{question}\n\n{answer}" if question else answer
    return IncomingDocument(external_id=external_id, title=title, text=text, url=url)


class ImportedAnswers:
    def __init__(self, source: Source) -> None:
        self.source = source

    def read(self) -> Iterator[Item]:
        answers = SupportAnswer.objects.filter(source=self.source, approved=True).order_by("pk")
        yield Total(answers.count())
        for row in answers.iterator():
            # Stored already scrubbed (see ingestion.support_answers).
            yield Fetched(
                answer_document(
                    external_id=row.external_id,
                    question=row.question,
                    answer=row.answer,
                    names=[],
                    url=row.url,
                )
            )
        # An answer taken back (un-approved) is an explicit removal, not a guess from absence.
        withdrawn = SupportAnswer.objects.filter(source=self.source, approved=False)
        for external_id in withdrawn.values_list("external_id", flat=True):
            yield Gone(external_id)


class DiscordConnector:
    def __init__(
        self, *, token: str, channel_id: str, approved_reaction: str = "", api_base: str
    ) -> None:
        self.channel_id = channel_id
        self.approved_reaction = approved_reaction
        self.api_base = api_base.rstrip("/")
        self.headers = {"Authorization": f"Bot {token}", "User-Agent": "AskDocsBot (askdocs, 1.0)"}

    def read(self) -> Iterator[Item]:
        messages = list(self._messages())
        approved = [m for m in messages if self._approved(m)]
        yield Total(len(messages))
        # A message without the approval reaction is an explicit "not (or no longer) an answer".
        for message in messages:
            if not self._approved(message):
                yield Gone(f"discord:{message['id']}")
        for message in approved:
            author = message.get("author") or {}
            names = [
                *_discord_names(author),
                *(n for u in message.get("mentions", []) for n in _discord_names(u)),
            ]
            question = ""
            replied = message.get("referenced_message")
            if replied:
                question = replied.get("content", "")
                names += _discord_names(replied.get("author") or {})
            yield Fetched(
                answer_document(
                    external_id=f"discord:{message['id']}",
                    question=question,
                    answer=message.get("content", ""),
                    names=names,
                )
            )

    def _approved(self, message: dict[str, Any]) -> bool:
        if not (message.get("content") or "").strip():
            return False
        if not self.approved_reaction:
            return True
        return any(
            (r.get("emoji") or {}).get("name") == self.approved_reaction and r.get("count", 0) > 0
            for r in message.get("reactions") or []
        )

    def _messages(self) -> Iterator[dict[str, Any]]:
        url = f"{self.api_base}/channels/{self.channel_id}/messages"
        before = None
        with httpx.Client(headers=self.headers, timeout=TIMEOUT) as client:
            for _ in range(1000):  # 100,000 messages at most
                params = {"limit": "100", **({"before": before} if before else {})}
                page = _json(client, "GET", url, "Discord", params=params)
                if not isinstance(page, list):
                    raise ConnectorError(
                        "Discord answered with something that is not a message list"
                    )
                yield from page
                if len(page) < 100:
                    return
                before = page[-1]["id"]


class IntercomConnector:
    def __init__(self, *, token: str, tag: str, api_base: str) -> None:
        self.tag = tag
        self.api_base = api_base.rstrip("/")
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "Intercom-Version": "2.11",
        }

    def read(self) -> Iterator[Item]:
        with httpx.Client(headers=self.headers, timeout=TIMEOUT) as client:
            tag_id = self._tag_id(client)
            ids = list(self._conversation_ids(client, tag_id))
            yield Total(len(ids))
            for conversation_id in ids:
                yield Fetched(self._answer(client, conversation_id))

    def _tag_id(self, client: httpx.Client) -> str:
        tags = _json(client, "GET", f"{self.api_base}/tags", "Intercom").get("data", [])
        for tag in tags:
            if tag.get("name") == self.tag or str(tag.get("id")) == self.tag:
                return str(tag["id"])
        raise ConnectorError(f"Intercom has no tag named {self.tag!r}")

    def _conversation_ids(self, client: httpx.Client, tag_id: str) -> Iterator[str]:
        cursor = None
        for _ in range(1000):
            pagination: dict[str, Any] = {"per_page": 50}
            if cursor:
                pagination["starting_after"] = cursor
            body = {
                "query": {"field": "tag_ids", "operator": "IN", "value": [tag_id]},
                "pagination": pagination,
            }
            page = _json(
                client, "POST", f"{self.api_base}/conversations/search", "Intercom", json=body
            )
            for conversation in page.get("conversations", []):
                yield str(conversation["id"])
            cursor = ((page.get("pages") or {}).get("next") or {}).get("starting_after")
            if not cursor:
                return

    def _answer(self, client: httpx.Client, conversation_id: str) -> IncomingDocument:
        conversation = _json(
            client, "GET", f"{self.api_base}/conversations/{conversation_id}", "Intercom"
        )
        source = conversation.get("source") or {}
        names = [(source.get("author") or {}).get("name", "")]
        question = _html_text(source.get("body", "")) or source.get("subject", "")
        replies = []
        parts = (conversation.get("conversation_parts") or {}).get("conversation_parts", [])
        for part in parts:
            author = part.get("author") or {}
            names.append(author.get("name", ""))
            if part.get("part_type") == "comment" and author.get("type") in ("admin", "bot"):
                replies.append(_html_text(part.get("body") or ""))
        return answer_document(
            external_id=f"intercom:{conversation_id}",
            question=question,
            answer="\n\n".join(r for r in replies if r),
            names=names,
        )


def _json(client: httpx.Client, method: str, url: str, service: str, **kwargs: Any) -> Any:
    try:
        response = client.request(method, url, **kwargs)
    except httpx.HTTPError as error:
        raise ConnectorError(f"Cannot reach {service} at {url}: {type(error).__name__}") from error
    if response.status_code in (401, 403):
        raise ConnectorError(
            f"{service} rejected the token (HTTP {response.status_code}); "
            "check the token and its permissions in the source settings."
        )
    if response.status_code == 429:
        raise ConnectorError(f"{service} is rate-limiting us (HTTP 429); the next sync retries.")
    if response.status_code >= 400:
        raise ConnectorError(f"{service} answered HTTP {response.status_code} for {url}")
    try:
        return response.json()
    except ValueError as error:
        raise ConnectorError(f"{service} answered with invalid JSON for {url}") from error


def _discord_names(user: dict[str, Any]) -> list[str]:
    return [str(user[k]) for k in ("username", "global_name", "nick") if user.get(k)]


def _html_text(html: str) -> str:
    if not html.strip():
        return ""
    tree = lxml.html.fromstring(html)
    for br in tree.iter("br", "p", "li"):
        br.tail = (br.tail or "") + "\n"
    return tree.text_content().strip()


def _required(config: dict[str, Any], key: str) -> str:
    value = str(config.get(key) or "").strip()
    if not value:
        raise ConnectorError(f"This support source needs {key!r} in its settings.")
    return value
