"""A bad setting stops start-up with a message that names the variable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def check(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "ASKDOCS_TESTING": "1", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ASKDOCS_MODEL_THREADS", "many", "ASKDOCS_MODEL_THREADS='many' is not a whole number"),
        ("ASKDOCS_MODEL_THREADS", "0", "ASKDOCS_MODEL_THREADS=0 is below the minimum 1"),
        ("ASKDOCS_DEFAULT_THRESHOLD", "0.4", "ASKDOCS_DEFAULT_THRESHOLD is no longer read"),
        ("ASKDOCS_RATE_SMS_PER_SENDER", "ten", "ASKDOCS_RATE_SMS_PER_SENDER='ten' is not a rate"),
        ("ASKDOCS_RETRIEVAL_CACHE_SECONDS", "-1", "ASKDOCS_RETRIEVAL_CACHE_SECONDS=-1 is below"),
        ("DJANGO_DEBUG", "maybe", "DJANGO_DEBUG='maybe' is not a boolean"),
        ("REDIS_URL", "localhost:6379", "REDIS_URL='localhost:6379' is not a valid URL"),
        ("OLLAMA_HOST", "ftp://x", "OLLAMA_HOST='ftp://x' is not a valid URL"),
        ("ASKDOCS_EMBEDDER", "word2vec", "ASKDOCS_EMBEDDER='word2vec' must be one of"),
        ("DATABASE_URL", "nosuchdb://x", "DATABASE_URL"),
    ],
)
def test_it_names_the_bad_variable(name, value, message):
    result = check(**{name: value})
    assert result.returncode != 0
    assert message in result.stderr


def test_it_needs_a_secret_key_outside_debug(tmp_path):
    result = check(
        ASKDOCS_TESTING="0", DJANGO_DEBUG="0", DJANGO_SECRET_KEY="", ASKDOCS_DATA_DIR=str(tmp_path)
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_a_secret_can_come_from_a_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret-from-a-file\n")
    result = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.SECRET_KEY)"],
        cwd=REPO,
        env={**os.environ, "ASKDOCS_TESTING": "0", "DJANGO_SECRET_KEY": "",
             "DJANGO_SECRET_KEY_FILE": str(secret),
             "DJANGO_SETTINGS_MODULE": "assistant.settings"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "s3cret-from-a-file"


def test_good_defaults_pass_the_checks():
    result = check()
    assert result.returncode == 0, result.stderr


def test_it_uses_the_key_generated_into_the_data_folder(tmp_path):
    (tmp_path / "secret_key").write_text("generated-by-bin-run\n")
    result = check(
        ASKDOCS_TESTING="0", DJANGO_DEBUG="0", DJANGO_SECRET_KEY="", ASKDOCS_DATA_DIR=str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
