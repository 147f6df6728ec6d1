"""Chunk workers forked from a template process instead of started from scratch.

A chunk worker spends most of its start importing torch and Triton (seconds of CPU), often
longer than measuring the candidates of its chunk on the CPU path. A template is a process
started like a worker (allow-listed environment, its own session) that imports torch, Triton
and the worker's modules once (template_serve.py), runs no candidate code, touches no GPU and
holds nothing of the executor's but that environment; for each chunk it forks the supervisor,
which forks the worker:

    executor -> template (imports done; non-dumpable; one thread)
                  -> supervisor (own session, network namespace, subreaper, fds in place)
                       -> worker (the limits, user and Landlock domain of contain.preexec,
                          then chunked's worker loop; never an exec)

The supervisor and the worker get what `contain.supervise` gives an exec'd worker: the job
pipe on stdin, the log on stdout and stderr, the channel, ruleset and link descriptors at their
fixed numbers and no other descriptor, the worker's environment and directory, the worker's
limits, user and Landlock domain. Where no user is switched, a root worker's capabilities are
cleared outright (an exec would have left it none through the empty bounding set). The template
ends when the executor's end of its socket closes; supervisors die with it (death signal), and
workers with their supervisors.

`ForkedProcess` is the executor's handle on a supervisor (pid, poll, wait, returncode as
subprocess.Popen's): the template reaps it and reports its exit status.

Used where `enabled(device)` says so: on the CPU path unless WB_WORKER_TEMPLATE=0; on a GPU only
with WB_WORKER_TEMPLATE=1. A template that cannot start, or that finds a second thread in itself
(forking it would copy a lock some thread holds), is not used: the worker is exec'd as before.
"""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from typing import Sequence

from workbench.execution import contain

ENV = "WB_WORKER_TEMPLATE"
#: What a template imports before its first fork: what a chunk worker imports on the CPU path
#: (the last three lazily: torch's shape checks, Triton's interpreter and the Gluon modules it patches).
PRELOAD = ("torch", "triton", "triton.language", "workbench.execution.chunked", "workbench.execution.worker",
           "workbench.execution.gate", "workbench.execution.guards", "workbench.execution.tensorfile",
           "workbench.problems", "torch.fx.experimental.symbolic_shapes", "triton.runtime.interpreter",
           "triton.experimental.gluon")
#: Environment variables that differ per worker (read when used, not at import): set in the
#: fork, not part of the template's environment.
PER_WORKER = ("HOME", "TMPDIR", "TRITON_CACHE_DIR", "TORCH_EXTENSIONS_DIR")
#: Templates kept at once (one per environment); beyond it the oldest without a live child ends.
MAX_TEMPLATES = 3
START_TIMEOUT_S = 300.0
_MAX_MSG = 1 << 20


def enabled(device: str) -> bool:
    """Whether chunk workers for `device` are forked from a template (see the module docstring)."""
    v = os.environ.get(ENV, "")
    if v == "0" or not sys.platform.startswith("linux"):
        return False
    return v == "1" or device == "cpu"


# ----------------------------------------------------------------------- executor side
class TemplateError(RuntimeError):
    """The template could not start or could not fork a worker."""


class ForkedProcess:
    """A supervisor forked by a template: the parts of subprocess.Popen the executor uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None
        self._done = threading.Event()

    def _exited(self, rc: int) -> None:
        if self.returncode is None:
            self.returncode = rc
        self._done.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(f"supervisor {self.pid}", timeout)
        return self.returncode


class Template:
    """One template process and the supervisors it forked."""

    def __init__(self, env: dict[str, str], preload: Sequence[str] = PRELOAD, timeout_s: float = START_TIMEOUT_S):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._tmp = tempfile.mkdtemp(prefix="wb_template_")
        self._log = os.path.join(self._tmp, "template.log")
        env = contain.minimal_env(env, self._tmp)
        try:
            with open(self._log, "wb") as log:
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "workbench.execution.template_serve", str(theirs.fileno()),
                     ",".join(preload)],
                    env=env, cwd=self._tmp, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    pass_fds=(theirs.fileno(),), start_new_session=True)
        finally:
            theirs.close()
        self._sock = mine
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._replies: dict[int, tuple[threading.Event, dict]] = {}
        self._children: dict[int, ForkedProcess] = {}
        self._early: dict[int, int] = {}     # exits reported before the spawn's reply was read
        self._next = 0
        self.dead = False
        mine.settimeout(timeout_s)
        try:
            hello = json.loads(mine.recv(_MAX_MSG) or b"{}")
        except (OSError, ValueError) as e:
            hello = {"error": f"{type(e).__name__}: {e}"}
        mine.settimeout(None)
        if hello.get("type") != "ready":
            err = hello.get("error") or self._log_tail() or "no answer"
            self.close()
            raise TemplateError(f"the worker template did not start: {err}")
        self.threads = int(hello.get("threads", 0))
        self._reader = threading.Thread(target=self._read, name="wb-template", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(_MAX_MSG)
            except OSError:
                data = b""
            if not data:
                break
            try:
                msg = json.loads(data)
            except ValueError:
                continue
            with self._lock:
                if "exit" in msg:
                    pid, rc = int(msg["exit"]), int(msg["rc"])
                    child = self._children.pop(pid, None)
                    if child is None:
                        self._early[pid] = rc
                    else:
                        child._exited(rc)
                elif msg.get("id") in self._replies:
                    ev, box = self._replies[msg["id"]]
                    box.update(msg)
                    ev.set()
        with self._lock:
            self.dead = True
            for child in self._children.values():
                child._exited(-signal.SIGKILL)   # supervisors die with their template
            self._children.clear()
            for ev, box in self._replies.values():
                box.setdefault("error", "the worker template ended")
                ev.set()

    def spawn(self, fds: dict[str, int], spec: str, env: dict[str, str], cwd: str,
              timeout_s: float = 60.0) -> ForkedProcess:
        """Fork a supervisor running the chunk worker. `fds`: "stdin", "stdout", and the
        descriptors named in `spec` (contain.supervisor_argv's spec: ruleset, channel and link
        numbers are this process's; the template receives duplicates)."""
        names = [k for k, fd in fds.items() if fd >= 0]
        with self._lock:
            if self.dead:
                raise TemplateError("the worker template ended")
            self._next += 1
            rid = self._next
            ev, box = threading.Event(), {}
            self._replies[rid] = (ev, box)
        msg = json.dumps({"id": rid, "names": names, "fds": [fds[k] for k in names], "spec": spec, "env": env,
                          "cwd": cwd}).encode()
        try:
            with self._send_lock:
                socket.send_fds(self._sock, [msg], [fds[k] for k in names])
            if not ev.wait(timeout_s):
                raise TemplateError(f"the worker template did not answer within {timeout_s:.0f} s")
        except OSError as e:
            raise TemplateError(f"the worker template is gone: {e}") from e
        finally:
            with self._lock:
                self._replies.pop(rid, None)
        if "pid" not in box:
            raise TemplateError(str(box.get("error", "no pid")))
        child = ForkedProcess(int(box["pid"]))
        with self._lock:
            if child.pid in self._early:
                child._exited(self._early.pop(child.pid))
            elif self.dead:
                child._exited(-signal.SIGKILL)
            else:
                self._children[child.pid] = child
        return child

    def close(self) -> None:
        # shutdown first: a close alone leaves the socket open while the reader thread is in recv.
        for end in (lambda: self._sock.shutdown(socket.SHUT_RDWR), self._sock.close):
            try:
                end()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _log_tail(self) -> str:
        try:
            with open(self._log, "rb") as f:
                return f.read()[-2000:].decode(errors="replace").strip()
        except OSError:
            return ""

    def live_children(self) -> int:
        with self._lock:
            return len(self._children)


class TemplatePool:
    """A template per environment (the environment a worker is exec'd with, less PER_WORKER),
    started on first use; a key whose template failed is not tried again."""

    def __init__(self, preload: Sequence[str] = PRELOAD):
        self.preload = tuple(preload)
        self._lock = threading.Lock()
        self._templates: dict[tuple, Template] = {}
        self._failed: dict[tuple, str] = {}

    @staticmethod
    def key(env: dict[str, str]) -> tuple:
        return tuple(sorted((k, v) for k, v in env.items() if k not in PER_WORKER))

    def get(self, env: dict[str, str]) -> Template | None:
        """The template for `env` (started if need be), or None where none can be used."""
        key = self.key(env)
        with self._lock:
            t = self._templates.get(key)
            if t is not None and not t.dead and t.proc.poll() is None:
                return t
            if key in self._failed:
                return None
            if len(self._templates) >= MAX_TEMPLATES:
                idle = [k for k, old in self._templates.items() if not old.live_children()]
                if idle:
                    self._templates.pop(idle[0]).close()
            try:
                t = Template(dict(key), self.preload)
            except (TemplateError, OSError) as e:
                self._failed[key] = str(e)
                return None
            if t.threads != 1:
                t.close()
                self._failed[key] = f"the template has {t.threads} threads after its imports"
                return None
            self._templates[key] = t
            return t

    def why_not(self, env: dict[str, str]) -> str:
        return self._failed.get(self.key(env), "")

    def close(self) -> None:
        with self._lock:
            for t in self._templates.values():
                t.close()
            self._templates.clear()


POOL = TemplatePool()
atexit.register(POOL.close)


def spawn_worker(env: dict[str, str], cwd: str, spec: str, fds: dict[str, int]) -> ForkedProcess | None:
    """A chunk worker forked from the pool's template for `env` (its supervisor's handle), or
    None where no template serves (the caller execs one)."""
    t = POOL.get(env)
    if t is None:
        return None
    try:
        return t.spawn(fds, spec, env, cwd)
    except TemplateError:
        return None
