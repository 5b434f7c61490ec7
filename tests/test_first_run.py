"""A newcomer's first hour: a shell without the data folder's variables, the first login, and
the model stored in the data folder (issue 31)."""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]


def manage(*args: str, data_dir: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """manage.py as a new shell runs it: no secret key, no test settings."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "ASKDOCS_"))
    }
    env.update(ASKDOCS_DATA_DIR=str(data_dir), **extra)
    return subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_commands_help_needs_no_secret_key(tmp_path):
    done = manage("fetch_model", "--help", data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "usage: manage.py fetch_model" in done.stdout
    assert manage("--help", data_dir=tmp_path).returncode == 0


def test_a_command_without_a_secret_key_says_so_in_one_line(tmp_path):
    done = manage("migrate", data_dir=tmp_path)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert f"{tmp_path / 'secret_key'} does not exist" in done.stderr
    assert "ASKDOCS_DATA_DIR" in done.stderr


def test_a_command_reads_the_secret_key_run_generated_in_the_data_folder(tmp_path):
    (tmp_path / "secret_key").write_text("k" * 50)
    done = manage("check", data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout


def test_asking_before_the_database_is_set_up_says_how_to_set_it_up(tmp_path):
    (tmp_path / "secret_key").write_text("k" * 50)
    # The embedded default's database (a pass on PostgreSQL sets DATABASE_URL for the suite).
    done = manage(
        "ask", "How do I get my money back?", data_dir=tmp_path, DATABASE_URL="", REDIS_URL=""
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "The database is not ready (no such table" in done.stderr
    assert "manage.py migrate" in done.stderr


def test_the_local_model_is_fetched_into_the_data_folder(tmp_path):
    (tmp_path / "secret_key").write_text("k" * 50)
    code = "from django.conf import settings; print(settings.ASKDOCS_LOCAL_MODEL)"
    done = manage("shell", "-v", "0", "-c", code, data_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == tmp_path.resolve() / "models"


@pytest.mark.django_db
def test_the_first_start_creates_a_staff_login_and_shows_its_password_once(
    client, monkeypatch, django_user_model
):
    monkeypatch.delitem(os.environ, "ASKDOCS_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command(
        "createadmin", "--first-login", "--url", "http://127.0.0.1:8000/admin/", stdout=out
    )
    lines = dict(
        line.strip().split(": ", 1) for line in out.getvalue().splitlines() if ": " in line
    )
    assert "Log in at http://127.0.0.1:8000/admin/" in out.getvalue()
    assert lines["username"] == "admin"
    response = client.post("/admin/login/", {"username": "admin", "password": lines["password"]})
    assert response.status_code == 302
    assert client.get("/admin/sandbox/").status_code == 200

    again = StringIO()
    call_command("createadmin", "--first-login", stdout=again)
    assert again.getvalue() == ""  # the second start neither shows nor changes the password
    assert django_user_model.objects.get(username="admin").check_password(lines["password"])


def test_run_prints_the_first_login_last_so_it_does_not_scroll_away(tmp_path):
    """`.bin/run` itself, its Python, MkDocs and daphne replaced by stubs that say what they
    were asked: the login createadmin prints comes after every other line (a pip warning
    included), right before the server starts."""
    import shutil

    checkout = tmp_path / "checkout"
    (checkout / ".bin").mkdir(parents=True)
    shutil.copy(ROOT / ".bin" / "run", checkout / ".bin" / "run")
    stub = "#!/usr/bin/env bash\n"
    (checkout / ".bin" / "setup").write_text(stub + 'echo "pip: WARNING: a resolver warning"\n')
    bin_dir = checkout / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(
        stub + 'case "$*" in *createadmin*) printf "\\nFirst start: created the console'
        '\'s staff account.\\n  password: s3cret\\n";; *) echo "python $2";; esac\n'
    )
    (bin_dir / "mkdocs").write_text(stub + "echo mkdocs\n")
    (bin_dir / "daphne").write_text(stub + 'echo "daphne serving"\n')
    for script in (*bin_dir.iterdir(), checkout / ".bin" / "run", checkout / ".bin" / "setup"):
        script.chmod(0o755)
    done = subprocess.run(  # noqa: S603
        [str(checkout / ".bin" / "run")],
        env={"PATH": os.environ["PATH"], "ASKDOCS_DATA_DIR": str(tmp_path / "data")},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines[-3:] == [
        "First start: created the console's staff account.", "  password: s3cret",
        "daphne serving",
    ], lines  # fmt: skip
    assert lines.count("  password: s3cret") == 1
