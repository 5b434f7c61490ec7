"""Writes for support answers pushed by webhook or imported from JSON/CSV. Answers are
scrubbed before they are stored; the next sync of the source indexes them."""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import secrets
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from assistant.links import UnsafeUrl, http_url
from ingestion.models import Source, SupportAnswer
from ingestion.scrub import scrub

MAX_TEXT = 20_000


class ImportRejected(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class AnswerInput:
    external_id: str
    question: str
    answer: str
    url: str = ""
    approved: bool = True


#: Config keys of the source's webhook token: its hash, a hint to tell it apart, when issued.
WEBHOOK_TOKEN_KEYS = ("webhook_token_sha256", "webhook_token_hint", "webhook_token_issued")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def source_webhook_token_issue(*, source: Source) -> str:
    """A new secret for the source's webhook, replacing any earlier one; only its hash and a
    hint (its last four characters) are kept, so it can be shown only now."""
    token = "whk_" + secrets.token_urlsafe(32)
    config = dict(source.config or {})
    config["webhook_token_sha256"] = _token_hash(token)
    config["webhook_token_hint"] = f"whk_…{token[-4:]}"
    config["webhook_token_issued"] = timezone.now().isoformat(timespec="seconds")
    Source.objects.filter(pk=source.pk).update(config=config)
    source.config = config
    return token


def source_webhook_token_revoke(*, source: Source) -> None:
    """Forget the token: pushes with it are refused from now on."""
    config = {k: v for k, v in (source.config or {}).items() if k not in WEBHOOK_TOKEN_KEYS}
    Source.objects.filter(pk=source.pk).update(config=config)
    source.config = config


def source_webhook_token_valid(*, source: Source, token: str) -> bool:
    expected = (source.config or {}).get("webhook_token_sha256", "")
    given = _token_hash(token)
    return bool(expected) and hmac.compare_digest(expected, given)


def support_answer_save(*, source: Source, answer: AnswerInput) -> SupportAnswer:
    if (
        source.kind != Source.Kind.SUPPORT
        or (source.config or {}).get("provider", "import") != "import"
    ):
        raise ImportRejected("Answers can only be pushed to a support source of provider 'import'.")
    row, _ = SupportAnswer.objects.update_or_create(
        source=source,
        external_id=answer.external_id,
        defaults={
            "question": scrub(answer.question),
            "answer": scrub(answer.answer),
            "url": answer.url,
            "approved": answer.approved,
        },
    )
    return row


def support_answers_parse(*, data: bytes, filename: str) -> list[AnswerInput]:
    """Read a JSON array or CSV file of {id, question, answer, url?, approved?}; one bad row
    rejects the whole file (ImportRejected names it)."""
    return [_answer(row, number) for number, row in enumerate(_rows(data, filename), start=1)]


def support_answers_import(*, source: Source, data: bytes, filename: str) -> int:
    """Import a JSON array or CSV file of answers. All rows or none."""
    answers = support_answers_parse(data=data, filename=filename)
    with transaction.atomic():
        for answer in answers:
            support_answer_save(source=source, answer=answer)
    return len(answers)


def _rows(data: bytes, filename: str) -> list[dict[str, Any]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ImportRejected(f"{filename}: not UTF-8 text") from error
    if filename.lower().endswith(".json"):
        try:
            rows = json.loads(text)
        except ValueError as error:
            raise ImportRejected(f"{filename}: invalid JSON ({error})") from error
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ImportRejected(f"{filename}: expected a JSON array of objects")
        return rows
    if filename.lower().endswith(".csv"):
        return list(csv.DictReader(io.StringIO(text)))
    raise ImportRejected(f"{filename}: use a .json or .csv file")


def _answer(row: dict[str, Any], number: int) -> AnswerInput:
    missing = [k for k in ("id", "question", "answer") if not str(row.get(k) or "").strip()]
    if missing:
        raise ImportRejected(f"row {number}: missing {', '.join(missing)}")
    question, answer = str(row["question"]), str(row["answer"])
    if len(question) > MAX_TEXT or len(answer) > MAX_TEXT:
        raise ImportRejected(f"row {number}: longer than {MAX_TEXT} characters")
    try:
        url = http_url(str(row.get("url") or ""))
    except UnsafeUrl as error:
        raise ImportRejected(f"row {number}: {error}") from None
    approved = row.get("approved", True)
    if isinstance(approved, str):
        approved = approved.strip().lower() not in ("0", "false", "no", "")
    return AnswerInput(
        external_id=str(row["id"])[:200],
        question=question,
        answer=answer,
        url=url,
        approved=bool(approved),
    )
