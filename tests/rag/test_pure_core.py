"""The pipeline core is plain Python: importing every module of it must not pull in Django,
an HTTP client or a model library (those live in assistant/wiring/)."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import assistant.rag

CORE = sorted(
    m.name
    for m in pkgutil.walk_packages([str(Path(assistant.rag.__file__).parent)], "assistant.rag.")
)
BANNED = (
    "django", "celery", "rest_framework", "channels", "httpx", "requests", "tenacity",
    "pybreaker", "onnxruntime", "tokenizers", "chromadb", "flashrank", "ollama", "bm25s", "numpy",
)  # fmt: skip


def test_the_core_lists_every_module_of_the_package_and_its_folders():
    assert {
        "assistant.rag.types",
        "assistant.rag.retrieve.retriever",
        "assistant.rag.judge.answerability",
        "assistant.rag.reading.scoring",
    } <= set(CORE)


def test_it_imports_the_core_without_django_http_clients_or_model_libraries():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + f"bad = [m for m in {BANNED!r} if m in sys.modules]\n"
        + "assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
