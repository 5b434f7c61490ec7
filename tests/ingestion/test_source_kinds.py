"""The table of source kinds (ingestion/connectors/registry.py): every kind's row builds its
connector, names its form, card and manual section, and is what the model, `connector_for` and
the console read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from assistant.models import Project
from ingestion.connectors import connector_for
from ingestion.connectors.base import ConnectorError
from ingestion.connectors.files import FilesConnector
from ingestion.connectors.jsonl import JsonlConnector
from ingestion.connectors.manual import ManualConnector
from ingestion.connectors.registry import SOURCE_KINDS, console_cards
from ingestion.connectors.support_channels import DiscordConnector, ImportedAnswers
from ingestion.connectors.website import WebsiteConnector
from ingestion.console.forms import SourceForm, form_for
from ingestion.models import Source

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_kind_the_code_names_has_a_row_and_every_row_fits_the_column():
    named = {value for key, value in vars(Source.Kind).items() if key.isupper()}
    rows = [row.kind for row in SOURCE_KINDS]
    assert named <= set(rows)
    assert len(rows) == len(set(rows))
    assert all(len(kind) <= Source._meta.get_field("kind").max_length for kind in rows)


def test_the_model_takes_its_choices_from_the_table():
    field = Source._meta.get_field("kind")
    assert list(field.choices) == [(row.kind, row.label) for row in SOURCE_KINDS]
    assert Source(kind="support").get_kind_display() == "Support answers"


def test_every_row_names_a_form_that_is_a_source_form_or_none():
    for row in SOURCE_KINDS:
        form = form_for(row.kind)
        assert form is None or issubclass(form, SourceForm), row.kind
    assert [row.kind for row in console_cards()][:4] == ["website", "files", "support", "manual"]
    assert "curated" not in {row.kind for row in console_cards()}


def test_every_row_points_at_a_section_of_the_manual():
    for row in SOURCE_KINDS:
        page, _, anchor = row.docs.partition("#")
        headings = re.findall(r"^#+ (.+)$", (DOCS / page).read_text(), flags=re.M)
        assert anchor in {slugify(heading, "-") for heading in headings}, row.docs


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kind", "config", "built"),
    [
        ("website", {"start_url": "https://docs.example/"}, WebsiteConnector),
        ("files", {}, FilesConnector),
        ("files", {"jsonl": "corpus.jsonl"}, JsonlConnector),
        ("support", {"provider": "import"}, ImportedAnswers),
        ("support", {"provider": "discord", "token": "t", "channel_id": "1"}, DiscordConnector),
        ("manual", {"text": "Hello"}, ManualConnector),
    ],
)
def test_connector_for_builds_each_kind_from_its_row(kind, config, built):  # noqa: ANN001
    project = Project.objects.create(name="Docs site")
    source = Source.objects.create(project=project, kind=kind, name="S", config=config)
    assert isinstance(connector_for(source), built)


@pytest.mark.django_db
def test_a_kind_without_a_row_cannot_be_synced():
    project = Project.objects.create(name="Docs site")
    source = Source.objects.create(project=project, kind="gopher", name="S")
    with pytest.raises(ConnectorError, match="Unknown source kind 'gopher'"):
        connector_for(source)
