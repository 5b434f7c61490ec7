"""One module per kind of source, one row each in registry.py. `connector_for` builds the
connector a source needs from its row. This package stays light to import: `ingestion.models`
reads the registry for `Source.kind`'s choices."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from django.utils.module_loading import import_string

from ingestion.connectors.registry import BY_KIND

if TYPE_CHECKING:
    from ingestion.connectors.base import Connector
    from ingestion.models import Source


def connector_for(source: Source) -> Connector:
    row = BY_KIND.get(source.kind)
    if row is None:
        # Here, not at the top: base.py reads ingestion.models, which reads this package.
        from ingestion.connectors.base import ConnectorError

        raise ConnectorError(f"Unknown source kind {source.kind!r}")
    build = cast("Callable[[Source], Connector]", import_string(row.connector))
    return build(source)
