"""The template process of template.py: imports torch, Triton and the worker's modules, then
forks a supervisor (which forks the chunk worker) for each request on its socket and reports
each supervisor's exit; ends when the executor's end of the socket closes."""
from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import socket
import sys
import tempfile
import threading
from typing import Sequence

from workbench.execution import contain
from workbench.execution.template import _MAX_MSG, PRELOAD

_CAP_VERSION_3 = 0x20080522


def _drop_all_capabilities() -> None:
    """Clear this process's effective, permitted and inheritable capabilities (capset)."""
    header = (ctypes.c_uint32 * 2)(_CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if contain._lib().capset(header, data) != 0:
        os._exit(123)


def _supervise_forked(spec: str, cwd: str) -> int:
    """The supervisor, in a fork of the template: contain.supervise with the worker forked
    (contain.preexec, capabilities cleared where no user is switched) instead of exec'd."""
    from workbench.execution import chunked

    contain.become_subreaper()
    targets, ruleset_fd, fsize, mem, cpus, identity = contain.place_fds(spec)
    pid = os.fork()
    if pid == 0:
        try:
            contain.preexec(ruleset_fd, fsize, mem, cpus, identity)()
            if identity is None and os.geteuid() == 0:
                _drop_all_capabilities()
            contain.prctl(contain._PR_SET_DUMPABLE, 1)   # as an exec'd worker is
            sys.argv = [chunked.__file__]
            sys.path[0] = cwd
            chunked._worker_main()
        except BaseException:  # noqa: BLE001
            import traceback

            traceback.print_exc()
        finally:
            os._exit(1)
    return contain.wait_worker(pid, targets)


def _child(sock: socket.socket, req: dict, fds: list[int]) -> None:
    """In a fork of the template: become the supervisor of `req` and never return."""
    try:
        sock.detach()
        os.setsid()
        if os.geteuid() == 0:
            contain._lib().unshare(contain._CLONE_NEWNET)
        contain.prctl(contain._PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:
            os._exit(124)
        for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(s, signal.SIG_DFL)
        got = dict(zip(req["names"], fds))
        spec = str(req["spec"])
        # Descriptors named in the spec are renumbered to what the template received.
        parts = spec.split(":")
        for i, name in ((0, "ruleset"), (4, "channel"), (5, "link")):
            parts[i] = str(got.get(name, -1))
        spec = ":".join(parts)
        os.dup2(got["stdin"], 0)
        os.dup2(got["stdout"], 1)
        os.dup2(got["stdout"], 2)
        keep = {0, 1, 2} | {fd for name, fd in got.items() if name not in ("stdin", "stdout")}
        for fd in _open_fds():
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in req["env"].items()})
        tempfile.tempdir = None
        rc = _supervise_forked(spec, req["cwd"])
    except BaseException:  # noqa: BLE001
        rc = 125
    os._exit(rc)


def _open_fds() -> list[int]:
    try:
        return [int(x) for x in os.listdir("/proc/self/fd")]
    except OSError:
        return list(range(3, 1024))


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def serve(fd: int, preload: Sequence[str]) -> None:
    """The template's loop: fork a supervisor per request, report each one's exit."""
    import importlib

    contain.protect_process()
    sock = socket.socket(fileno=fd)
    try:
        for name in preload:
            if name:
                importlib.import_module(name)
    except BaseException as e:  # noqa: BLE001
        sock.send(json.dumps({"type": "error", "error": f"{type(e).__name__}: {e}"}).encode())
        return
    sys.stdout.flush()
    sys.stderr.flush()
    sock.send(json.dumps({"type": "ready", "threads": _threads()}).encode())
    children: dict[int, int] = {}   # pidfd -> pid
    while True:
        ready, _, _ = select.select([sock.fileno(), *children], [], [])
        for r in ready:
            if r in children:
                pid = children.pop(r)
                os.close(r)
                try:
                    _, status = os.waitpid(pid, 0)
                    rc = os.waitstatus_to_exitcode(status)
                except ChildProcessError:
                    rc = -signal.SIGKILL
                sock.send(json.dumps({"exit": pid, "rc": rc}).encode())
                continue
            try:
                data, fds, _, _ = socket.recv_fds(sock, _MAX_MSG, 16)
            except OSError:
                data, fds = b"", []
            if not data:
                for pidfd, pid in children.items():
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
                return
            try:
                req = json.loads(data)
                rid = req["id"]
            except (ValueError, KeyError, TypeError):
                for f in fds:
                    os.close(f)
                continue
            threads = _threads()
            if threads != 1:
                sock.send(json.dumps({"id": rid, "error": f"the template has {threads} threads"}).encode())
                for f in fds:
                    os.close(f)
                continue
            pid = os.fork()
            if pid == 0:
                _child(sock, req, fds)
            for f in fds:
                os.close(f)
            children[os.pidfd_open(pid)] = pid
            sock.send(json.dumps({"id": rid, "pid": pid}).encode())


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2].split(",") if len(sys.argv) > 2 else PRELOAD)
