"""Small local HTTP servers that answer like Discord's and Intercom's public APIs (only the
parts the connectors use). Only this HTTP edge is fake; the connectors run for real."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "good-token"  # noqa: S105 - a fake API's fake token


class FakeApis:
    def __init__(self) -> None:
        self.discord_messages: list[dict[str, Any]] = []  # newest first, as Discord returns
        self.intercom_tags = [{"type": "tag", "id": "17", "name": "approved"}]
        self.intercom_conversations: dict[str, dict[str, Any]] = {}
        self.requests: list[str] = []
        apis = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self, scheme: str) -> bool:
                if self.headers.get("Authorization") == f"{scheme} {TOKEN}":
                    return True
                if scheme == "Bot":
                    self._reply(401, {"message": "401: Unauthorized", "code": 0})
                else:
                    self._reply(
                        401,
                        {
                            "type": "error.list",
                            "errors": [{"code": "unauthorized", "message": "Access Token Invalid"}],
                        },
                    )
                return False

            def do_GET(self) -> None:  # noqa: N802
                apis.requests.append(f"GET {self.path}")
                parts = urlsplit(self.path)
                path, query = parts.path, parse_qs(parts.query)
                if path.startswith("/discord/api/v10/channels/"):
                    if self._authorised("Bot"):
                        self._reply(200, apis.discord_page(query))
                elif path == "/intercom/tags":
                    if self._authorised("Bearer"):
                        self._reply(200, {"type": "list", "data": apis.intercom_tags})
                elif path.startswith("/intercom/conversations/"):
                    if self._authorised("Bearer"):
                        conversation = apis.intercom_conversations.get(path.rsplit("/", 1)[1])
                        if conversation is None:
                            self._reply(404, {"type": "error.list", "errors": []})
                        else:
                            self._reply(200, conversation)
                else:
                    self._reply(404, {"message": "404: Not Found"})

            def do_POST(self) -> None:  # noqa: N802
                apis.requests.append(f"POST {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path == "/intercom/conversations/search" and self._authorised("Bearer"):
                    self._reply(200, apis.intercom_search(body))
                elif self.path != "/intercom/conversations/search":
                    self._reply(404, {})

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # Discord: GET /channels/{id}/messages?limit=&before= (newest first) ----------------------

    def discord_page(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        limit = int(query.get("limit", ["50"])[0])
        messages = self.discord_messages
        if "before" in query:
            before = int(query["before"][0])
            messages = [m for m in messages if int(m["id"]) < before]
        return messages[:limit]

    # Intercom: POST /conversations/search (tag_ids IN [...]), cursor pagination -------------

    def intercom_search(self, body: dict[str, Any]) -> dict[str, Any]:
        wanted = set(body["query"]["value"])
        found = [
            {"type": "conversation", "id": cid}
            for cid, c in sorted(self.intercom_conversations.items())
            if wanted & {t["id"] for t in c["tags"]["tags"]}
        ]
        per_page = body.get("pagination", {}).get("per_page", 20)
        start = int(body.get("pagination", {}).get("starting_after") or 0)
        page = found[start : start + per_page]
        pages: dict[str, Any] = {"type": "pages", "per_page": per_page}
        if start + per_page < len(found):
            pages["next"] = {"per_page": per_page, "starting_after": str(start + per_page)}
        return {"type": "conversation.list", "conversations": page, "pages": pages}


def discord_message(
    message_id: int,
    content: str,
    *,
    author: str,
    replied_to: dict[str, Any] | None = None,
    reactions: list[str] = (),
    mentions: list[str] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": str(message_id),
        "type": 19 if replied_to else 0,
        "channel_id": "555",
        "content": content,
        "author": {"id": str(9000 + message_id), "username": author, "global_name": author.title()},
        "mentions": [{"id": "1", "username": name} for name in mentions],
        "reactions": [
            {"emoji": {"id": None, "name": r}, "count": 1, "me": False} for r in reactions
        ],
    }
    if replied_to:
        message["referenced_message"] = replied_to
        message["message_reference"] = {"message_id": replied_to["id"], "channel_id": "555"}
    return message


def intercom_conversation(
    cid: str, *, question: str, customer: str, answers: list[tuple[str, str]], tagged: bool
) -> dict[str, Any]:
    return {
        "type": "conversation",
        "id": cid,
        "source": {
            "type": "conversation",
            "subject": "",
            "body": f"<p>{question}</p>",
            "author": {"type": "user", "id": "u1", "name": customer, "email": "c@example.com"},
        },
        "tags": {
            "type": "tag.list",
            "tags": [{"type": "tag", "id": "17", "name": "approved"}] if tagged else [],
        },
        "conversation_parts": {
            "type": "conversation_part.list",
            "conversation_parts": [
                {
                    "type": "conversation_part",
                    "part_type": "comment",
                    "body": f"<p>{body}</p>",
                    "author": {"type": "admin", "id": "a1", "name": admin},
                }
                for admin, body in answers
            ],
            "total_count": len(answers),
        },
    }
