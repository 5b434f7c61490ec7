from __future__ import annotations

from django.apps import AppConfig


class MeasuringConfig(AppConfig):
    """The measuring tools (evaluate, bench, measure_*): an app of its own so their management
    commands are found; it has no models, and no other app imports it."""

    name = "measuring"
    label = "measuring"
