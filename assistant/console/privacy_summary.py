"""What the console says about a project's privacy: what it masks, what it keeps and for how
long, and what the last retention run and erasures did (a selector)."""

from __future__ import annotations

from dataclasses import dataclass, field

from assistant.models import Project
from assistant.personal_data.models import PrivacyAudit

BUILT_IN = (
    "e-mail addresses", "phone numbers", "card numbers (Luhn-checked)",
    "IBANs (checksum-checked)", "API keys, tokens and passwords", "public IP addresses",
)  # fmt: skip


LABELS = {
    "interactions": "questions emptied of their text", "question_vectors": "question vectors",
    "sms_messages": "SMS texts", "sms_conversations": "SMS conversations",
    "slack_events": "Slack questions", "discord_interactions": "Discord questions and presses",
    "feedback_comments": "feedback comments", "handoffs": "handoff transcripts",
    "outbox_files": "outbox files", "memory_facts": "remembered facts",
}  # fmt: skip


@dataclass
class PrivacySummary:
    masks: bool
    masked: list[str]
    own_labels: list[str]
    periods: list[tuple[str, int]]  # (what, days; 0: until erased)
    last_retention: PrivacyAudit | None
    erasures: int
    deleted_by_retention: list[tuple[str, int]] = field(default_factory=list)


def privacy_summary(*, project: Project) -> PrivacySummary:
    audits = PrivacyAudit.objects.filter(project=project)
    last = audits.filter(action=PrivacyAudit.Action.RETENTION).first()
    return PrivacySummary(
        masks=project.mask_personal_data,
        masked=list(BUILT_IN) if project.mask_personal_data else [],
        own_labels=[str(p.get("label", "")) for p in project.mask_patterns or []],
        periods=[
            ("Questions, answers and SMS texts", project.keep_conversations_days),
            ("Feedback comments (votes stay)", project.keep_feedback_comments_days),
            ('"Ask a person" transcripts', project.keep_handoffs_days),
            ("Remembered facts", project.keep_memory_days),
        ],
        last_retention=last,
        erasures=audits.filter(action=PrivacyAudit.Action.ERASE).count(),
        deleted_by_retention=[
            (LABELS.get(what, what), count)
            for what, count in (last.counts if last else {}).items()
            if count
        ],
    )
