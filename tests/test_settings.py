"""A bad setting stops start-up with a message that names the variable."""

from __future__ import annotations

import os
import secrets
import string
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
             "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "s3cret-from-a-file"


def test_good_defaults_pass_the_checks():
    result = check()
    assert result.returncode == 0, result.stderr
    # A command prints what it has to say, not libraries' start-up banners.
    assert "AXES: BEGIN" not in result.stderr and "INFO" not in result.stderr, result.stderr


def test_it_uses_the_key_generated_into_the_data_folder(tmp_path):
    (tmp_path / "secret_key").write_text("generated-by-bin-run\n")
    result = check(
        ASKDOCS_TESTING="0", DJANGO_DEBUG="0", DJANGO_SECRET_KEY="", ASKDOCS_DATA_DIR=str(tmp_path)
    )
    assert result.returncode == 0, result.stderr


def production(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Python with production settings: no debug, a strong key, a real host, HTTPS unset."""
    key = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(50))
    environment = {
        **os.environ, "ASKDOCS_TESTING": "0", "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": key, "DJANGO_ALLOWED_HOSTS": "example.com",
        "ASKDOCS_DATA_DIR": str(tmp_path),
    }  # fmt: skip
    for name in ("ASKDOCS_HTTPS", "DJANGO_SECURE_COOKIES", "ASKDOCS_PROXY_SSL_HEADER"):
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env={**environment, **env},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_production_settings_pass_the_deploy_checks(tmp_path):
    result = production(tmp_path, "manage.py", "check", "--deploy")
    assert result.returncode == 0, result.stderr
    # None at all: no security warning, and none of the schema's (colliding component names).
    assert "System check identified no issues (0 silenced)." in result.stdout, result.stdout


def test_plain_http_turns_the_https_settings_off(tmp_path):
    # What .bin/run does for http://127.0.0.1: no redirect, no HSTS, cookies not Secure-only.
    result = production(tmp_path, "manage.py", "check", "--deploy", ASKDOCS_HTTPS="0")
    output = result.stdout + result.stderr
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in output


# The lab's commands as Python sees them, with its extra's dependency installed, or, given
# `absent`, as an install without the `measure` extra does (an import of it fails).
LAB_COMMANDS = (
    "import sys\n"
    "if sys.argv[1:] == ['absent']: sys.modules['rouge_score'] = None\n"
    "import django; django.setup()\n"
    "from django.core.management import get_commands\n"
    "print(*(name in get_commands() for name in ('evaluate', 'bench', 'check')))"
)


def test_the_measuring_lab_is_an_app_only_where_its_extra_is_installed(tmp_path):
    without = production(tmp_path, "-c", LAB_COMMANDS, "absent")
    assert without.returncode == 0, without.stderr
    assert without.stdout.split() == ["False", "False", "True"]
    installed = production(tmp_path, "-c", LAB_COMMANDS)
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.split() == ["True", "True", "True"]


HTTPS_SETTINGS = (
    "SECURE_SSL_REDIRECT SECURE_HSTS_SECONDS SECURE_HSTS_INCLUDE_SUBDOMAINS SECURE_HSTS_PRELOAD"
    " SECURE_PROXY_SSL_HEADER SESSION_COOKIE_SECURE CSRF_COOKIE_SECURE"
).split()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "True 31536000 True True ('HTTP_X_FORWARDED_PROTO', 'https') True True"),
        ({"ASKDOCS_HTTPS": "0"}, "False 0 True True None False False"),
        (
            {
                "ASKDOCS_HSTS_SECONDS": "300",
                "ASKDOCS_HSTS_PRELOAD": "0",
                "ASKDOCS_PROXY_SSL_HEADER": "X-Scheme",
            },
            "True 300 True False ('HTTP_X_SCHEME', 'https') True True",
        ),  # fmt: skip
        ({"ASKDOCS_PROXY_SSL_HEADER": ""}, "True 31536000 True True None True True"),
    ],
)
def test_the_https_settings_come_from_the_environment(tmp_path, env, expected):
    code = f"from django.conf import settings; print(*map(settings.__getattr__, {HTTPS_SETTINGS}))"
    result = production(tmp_path, "-c", code, **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


def test_a_bad_proxy_header_name_is_named():
    result = check(ASKDOCS_PROXY_SSL_HEADER="X Forwarded: proto")
    assert result.returncode != 0
    assert "ASKDOCS_PROXY_SSL_HEADER='X Forwarded: proto' is not a header name" in result.stderr


@pytest.mark.django_db
def test_behind_the_proxy_plain_http_is_redirected_but_healthz_is_not(client, settings):
    from config import settings as product

    # The product's HTTPS settings as ASKDOCS_HTTPS=1 makes them (tests run with it off).
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_REDIRECT_EXEMPT = product.SECURE_REDIRECT_EXEMPT
    settings.SECURE_HSTS_SECONDS = 31_536_000
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    plain = client.get("/admin/login/", headers={"X-Forwarded-Proto": "http"})
    assert plain.status_code == 301
    assert plain["Location"] == "https://testserver/admin/login/"
    assert client.get("/healthz").status_code == 200  # load balancers probe over plain http
    secure = client.get("/admin/login/", headers={"X-Forwarded-Proto": "https"})
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"].startswith("max-age=31536000")
