"""The pipeline core is plain Python: importing it must not pull in Django or Celery."""

import subprocess
import sys

CORE = [
    "assistant.rag.types",
    "assistant.rag.ports",
    "assistant.rag.retrieval",
    "assistant.rag.prompting",
    "assistant.rag.answering",
    "assistant.rag.caching",
    "assistant.rag.extractive",
    "assistant.rag.answerability",
    "assistant.rag.chunking",
]


def test_it_imports_the_core_without_django_or_celery():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + "banned = ('django', 'celery', 'rest_framework', 'channels')\n"
        + "bad = [m for m in banned if m in sys.modules]\n"
        + "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
