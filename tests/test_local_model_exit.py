"""A process that loaded the local model ends cleanly (exit code 0), also while the model is
still writing an answer nobody reads any more: `bench --only load` printed its table and then
died with SIGSEGV (exit 139), as would a web process stopped by its supervisor mid-answer.
llama.cpp's threads went on using the model while the interpreter and the library's own
statics were torn down around them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests.ingestion.processes import REPO, environment

pytestmark = pytest.mark.local_model

#: Loads the model, reads the first words of a long answer, and leaves: the answer's stream
#: is neither read on nor closed (`left`), or closed with the model mid-token (`closed`).
PROCESS = """
import sys
import django

django.setup()
from assistant.rag.types import Prompt, Question, Turn
from assistant.wiring import runtime

question = "Write a long story about a lighthouse keeper, in twenty paragraphs."
parts = runtime.local_generator().stream(Prompt(
    system="You write long stories.", messages=(Turn("user", question),),
    question=Question(question), passages=(),
))
for part in parts:
    if isinstance(part, str):
        print("first words:", part, flush=True)
        break
if sys.argv[1] == "closed":
    parts.close()
"""


@pytest.mark.parametrize("how", ["left", "closed"])
def test_a_process_that_loaded_the_model_exits_cleanly_mid_answer(tmp_path, how: str) -> None:  # noqa: ANN001
    if not settings.ASKDOCS_LOCAL_MODEL.is_file():
        message = "the local model is not fetched: .venv/bin/python manage.py fetch_model"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    env = environment(tmp_path, ASKDOCS_LOCAL_MODEL=str(settings.ASKDOCS_LOCAL_MODEL))
    done = subprocess.run(
        [sys.executable, "-c", PROCESS, how], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "first words:" in done.stdout, done.stderr[-2000:]
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
