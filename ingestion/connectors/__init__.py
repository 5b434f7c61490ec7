"""One module per kind of source. `connector_for` picks the one a source needs."""

from __future__ import annotations

from ingestion.connectors.base import Connector, ConnectorError
from ingestion.models import Source


def connector_for(source: Source) -> Connector:
    config = source.config or {}
    if source.kind == Source.Kind.WEBSITE:
        from ingestion.connectors.website import WebsiteConnector
        from ingestion.selectors import fetch_states

        return WebsiteConnector.from_config(config, known=fetch_states(source=source))
    if source.kind == Source.Kind.FILES:
        if config.get("jsonl"):
            from ingestion.connectors.jsonl import JsonlConnector

            return JsonlConnector(config["jsonl"])
        from ingestion.connectors.files import FilesConnector

        return FilesConnector.for_source(source)
    if source.kind == Source.Kind.SUPPORT:
        from ingestion.connectors.support_channels import support_connector

        return support_connector(source)
    if source.kind == Source.Kind.MANUAL:
        from ingestion.connectors.manual import ManualConnector

        return ManualConnector(
            title=config.get("title") or source.name, text=config.get("text", "")
        )
    if source.kind == Source.Kind.CURATED:
        from ingestion.connectors.curated import CuratedConnector

        return CuratedConnector(source=source)
    raise ConnectorError(f"Unknown source kind {source.kind!r}")
