"""The team's curated answers (ingestion/curated.py), read again by a sync: a repair path, since
each answer is indexed when it is saved. Retired answers are not listed, so a sync removes any
copy of them that survived."""

from __future__ import annotations

from collections.abc import Iterator

from ingestion.connectors.base import Fetched, Item, Total
from ingestion.models import CuratedAnswer, Source
from ingestion.services import IncomingDocument


def curated_connector(source: Source) -> CuratedConnector:
    return CuratedConnector(source=source)


class CuratedConnector:
    def __init__(self, *, source: Source) -> None:
        self.source = source

    def read(self) -> Iterator[Item]:
        from ingestion.curated import indexed_title

        answers = list(CuratedAnswer.objects.filter(source=self.source, active=True))
        yield Total(len(answers))
        for curated in answers:
            yield Fetched(
                IncomingDocument(
                    external_id=curated.external_id,
                    title=indexed_title(curated),
                    text=curated.answer,
                    url=curated.url,
                )
            )
