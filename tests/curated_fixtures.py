"""What the curated-answer tests share: the demo's paraphrase that is refused today, the answer
a lead writes for it, and projects of their own holding the demo's plans page (so the session's
demo collection in the vector store is left alone)."""

from __future__ import annotations

from assistant.demo import DOCS_DIR, DOCS_URL
from assistant.models import Project
from ingestion.models import Source
from ingestion.services import document_upsert

ORIGIN = "http://127.0.0.1:8000"
#: The demo's paraphrase the *Changing plan* section answers but the cross-encoder scores 0.002.
CHEAPER = "Can I switch to a cheaper plan in the middle of the month?"
ANSWER = (
    "Yes. Move to a cheaper plan at any time under **Settings → Billing → Change plan**. "
    "The downgrade takes effect at the start of the next billing period."
)
LINK = "https://help.acme.example/plans#changing-plan"


def plans_project(name: str, number: str = "") -> Project:
    """A project with the demo's plans page, reachable from ORIGIN (and by text)."""
    project = Project.objects.create(name=name, allowed_origins=[ORIGIN], sms_number=number)
    source = Source.objects.create(project=project, name="Help", kind=Source.Kind.FILES)
    text = (DOCS_DIR / "plans.md").read_text(encoding="utf-8")
    document_upsert(source=source, external_id="plans.md", title="Plans and billing",
                    text=text.split("\n", 1)[1], url=DOCS_URL + "plans")  # fmt: skip
    return project
