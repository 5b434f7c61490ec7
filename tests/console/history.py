"""Three weeks of logged questions and votes for a project, so the console's metric pages have
something to show (browser walk-through screenshots). Rows are written the way the pipeline
logs them; nothing of our own is faked."""

from __future__ import annotations

import random
from datetime import timedelta

from django.utils import timezone

from assistant.models import Interaction, Project
from feedback.models import Feedback

ANSWERED = {
    "Billing": ["How do I get my money back?", "Where do I find my invoices?",
                "How do I change my plan?"],
    "Account": ["How do I reset my password?", "How do I turn on two-factor authentication?"],
    "Shipping": ["How long does delivery take?", "My parcel arrived damaged, what now?"],
    "Exports": ["How long does an export take?", "Which export formats are there?"],
}  # fmt: skip
# Questions the demo documents do not answer: paraphrases of a few needs, for blind spots.
UNANSWERED = {
    "Billing": [["Do you offer a student discount?", "Is there a discount for students?",
                 "Student pricing?"],
                ["Can I pay with Bitcoin?", "Do you accept crypto payments?"]],
    "Account": [["How do I change my username?", "Can I rename my user name?"]],
    "Shipping": [["Do you ship to Antarctica?"]],
}  # fmt: skip


def log_history(project: Project, *, days: int = 21, seed: int = 3) -> None:
    rng = random.Random(seed)
    now = timezone.now()
    rows: list[tuple[Interaction, int]] = []
    for day in range(days):
        for _ in range(rng.randint(6, 14)):
            topic = rng.choice(list(ANSWERED))
            if topic in UNANSWERED and rng.random() < 0.22 + 0.01 * (days - day) / 2:
                question = rng.choice(rng.choice(UNANSWERED[topic]))
                best = rng.uniform(0.0, 0.3)
            else:
                question = rng.choice(ANSWERED[topic])
                best = rng.uniform(0.35, 1.0)
            kept = 0 if best < project.threshold else rng.randint(1, 3)
            row = Interaction(
                project=project, channel=rng.choice(["widget"] * 5 + ["sms", "api"]),
                question=question, topic=topic, retrieval_query=f"({topic}) {question}",
                best_relevance=best, kept_count=kept, refused=not kept,
                answer="I'm sorry, I couldn't find an answer to your question." if not kept
                else "Open **Billing > Invoices** and choose the invoice. [1]",
                total_ms=rng.uniform(60, 180) if not kept else rng.uniform(250, 1400),
            )  # fmt: skip
            rows.append((row, day))
    Interaction.objects.bulk_create([row for row, _ in rows])
    votes, stamps = [], {}
    for row, day in rows:
        at = now - timedelta(days=day, hours=rng.randint(0, 8), minutes=rng.randint(0, 59))
        stamps[row.pk] = at
        Interaction.objects.filter(pk=row.pk).update(created_at=at)
        if rng.random() < 0.3:
            liked = rng.random() < (0.85 if row.kept_count else 0.1)
            votes.append(
                Feedback(
                    interaction=row,
                    client_id=f"history-{row.pk}",
                    vote=1 if liked else -1,
                    comment="" if liked or rng.random() < 0.5 else "Didn't answer my question.",
                )  # fmt: skip
            )
    Feedback.objects.bulk_create(votes)
    for vote in votes:  # a vote comes a little after its answer
        voted_at = stamps[vote.interaction_id] + timedelta(minutes=rng.randint(1, 20))
        Feedback.objects.filter(pk=vote.pk).update(updated_at=voted_at, created_at=voted_at)
