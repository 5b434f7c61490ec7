"""Where the product keeps its state, and the two switches every other part reads first."""

from __future__ import annotations

import tempfile
from pathlib import Path

from config.env import env, envbool

BASE_DIR = Path(__file__).resolve().parent.parent.parent  # the checkout
DEBUG = envbool("DJANGO_DEBUG", False)
# Set by config/test_settings.py (the test suite's settings) before this module loads.
TESTING = envbool("ASKDOCS_TESTING", False)

# Tests get a fresh data folder (database, vector store) unless told otherwise.
_default_data_dir = tempfile.mkdtemp(prefix="askdocs-test-") if TESTING else BASE_DIR / "data"
DATA_DIR = Path(env("ASKDOCS_DATA_DIR", str(_default_data_dir))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
