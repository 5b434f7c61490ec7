"""Every kind of source, one row each: the value stored in `Source.kind`, its label, the
function that builds its connector, its console form, its card on the console's "Add a source"
grid and its place in the manual. `connector_for`, `Source.kind`'s choices, the console's forms
and cards all read this table: a new kind is its module and one row (see README.md here).

Connectors and forms are named by dotted path and imported when first used
(`ingestion.connectors.connector_for`, `ingestion.console.forms.form_for`): a website crawl
pulls in httpx and lxml, and `ingestion.models` reads this module for its choices, so it
imports nothing of ingestion.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceKind:
    #: Stored in `Source.kind` (at most 10 characters): never change it once sources use it.
    kind: str
    #: How the console, the admin and the sources list name it.
    label: str
    #: Dotted path of a function `(source) -> Connector` that reads the source's `config`.
    connector: str
    #: Where the manual describes it: a page of docs/ and a heading's anchor.
    docs: str
    #: Dotted path of its console form (an `ingestion.console.forms.SourceForm`); "" when the
    #: console does not create or edit it with a form (curated answers have pages of their own).
    form: str = ""
    #: The line under its label on the "Add a source" grid, in this table's order; "" when it
    #: has no card.
    card: str = ""


SOURCE_KINDS: tuple[SourceKind, ...] = (
    SourceKind(
        kind="website",
        label="Website",
        connector="ingestion.connectors.website.website_connector",
        form="ingestion.console.forms.WebsiteSourceForm",
        card="Crawl a docs site or help centre from a start URL, obeying robots.txt.",
        docs="sources.md#documentation-websites",
    ),
    SourceKind(
        kind="files",
        label="Files",
        connector="ingestion.connectors.files.files_connector",
        form="ingestion.console.forms.FilesSourceForm",
        card="Upload Markdown, text, HTML or PDF files, or a .zip of them.",
        docs="sources.md#kinds-of-source",
    ),
    SourceKind(
        kind="support",
        label="Support answers",
        connector="ingestion.connectors.support_channels.support_connector",
        form="ingestion.console.forms.SupportSourceForm",
        card="Approved answers from Discord, Intercom, a JSON/CSV import or a webhook.",
        docs="sources.md#kinds-of-source",
    ),
    SourceKind(
        kind="manual",
        label="Manual entry",
        connector="ingestion.connectors.manual.manual_connector",
        form="ingestion.console.forms.ManualSourceForm",
        card="Type or paste a text (Markdown) the assistant may answer from.",
        docs="sources.md#kinds-of-source",
    ),
    # The answers the team wrote in the console (ingestion/curated.py): one such source a
    # project, made and filled by the curated-answers pages, so no form and no card.
    SourceKind(
        kind="curated",
        label="Curated answers",
        connector="ingestion.connectors.curated.curated_connector",
        docs="curated-answers.md#curated-answers",
    ),
)

BY_KIND: dict[str, SourceKind] = {row.kind: row for row in SOURCE_KINDS}


def kind_choices() -> list[tuple[str, str]]:
    """`Source.kind`'s choices. The field names this function, not its values, so its
    migration does not change when a row is added."""
    return [(row.kind, row.label) for row in SOURCE_KINDS]


def console_cards() -> list[SourceKind]:
    """The kinds the console's "Add a source" grid offers, in the table's order."""
    return [row for row in SOURCE_KINDS if row.card and row.form]
