"""Containment of the processes that import candidate code.

A worker is started through a small supervisor (`python -m workbench.execution.contain`):

    executor thread -> supervisor (own session, child subreaper, outside every restriction)
                         -> worker (minimal environment, resource limits, Landlock domain)

What each layer gives, on Linux (`describe()` says which of them this machine applies):
- environment: the worker sees an allow-list of variables (paths, locale, CUDA and Triton
  settings), never the parent's tokens or keys; HOME and TMPDIR are its work directory;
- resource limits: CPU seconds, file size, core dumps off, process count;
- Landlock (kernel 5.13 and later, unprivileged): the worker and all its descendants may write
  only under their work directory, the build caches and the GPU lock directory (device files
  may be opened for writing, not created); from ABI 4 on, no TCP bind or connect; from ABI 6 on,
  no signal to any process outside the domain (the supervisor, the executor, the app) and no
  abstract unix socket outside it;
- a network namespace with only a loopback device, where the executor runs as root (unshare);
- the supervisor is a child subreaper: every descendant of the worker, one that called
  setsid() or double-forked included, is re-parented to it and killed when the worker ends;
  the worker itself ends with its supervisor (PR_SET_PDEATHSIG).

- another user: where the executor runs as root, the worker runs as `nobody` (its work
  directory, the build caches and the GPU locks handed over to it), so it cannot read the
  files, environment or memory of the executor's user; a root executor that cannot switch
  (`worker_identity` says why) runs the worker as root without any capability. Either way
  the processes that hold anything worth reading make themselves non-dumpable
  (`protect_process`: the executor, the judge's timer and reference worker), which closes
  their /proc/<pid>/environ, mem and fd to every process without CAP_SYS_PTRACE.

What it does NOT give: reading is not restricted beyond that (a worker of the same user can
read files the user can read); UDP and non-abstract unix sockets are open where there is no
network namespace; GPU memory of other processes is not protected; the Triton cache directory
is shared by the executor's workers (a candidate could plant a compiled kernel there for a
later one). Run code from a model you do not trust inside a container or VM as well.
"""
from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import struct
import sys
import time
from pathlib import Path
from typing import Sequence

# ----------------------------------------------------------------------- environment
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV",
             "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
             "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "TRITON_INTERPRET", "TRITON_CACHE_DIR",
             "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH", "TORCH_EXTENSIONS_DIR", "TORCH_CUDA_ARCH_LIST",
             "CC", "CXX", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYTHONUNBUFFERED", "NCCL_NVLS_ENABLE",
             "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")


def minimal_env(base: dict[str, str], workdir: str | os.PathLike, extra: dict[str, str] | None = None) -> dict:
    """The worker's environment: the allow-listed variables of `base`, then `extra`; HOME and
    TMPDIR point at `workdir`. Anything else (API keys, tokens, cloud credentials) is dropped."""
    env = {k: v for k, v in base.items() if k in _ENV_KEEP}
    env.update(extra or {})
    env.update(HOME=str(workdir), TMPDIR=str(workdir), PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    return env


# ----------------------------------------------------------------------- Landlock
_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446   # the same on x86-64 and arm64
_CREATE_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_WRITE_FILE, _FS_REMOVE_DIR, _FS_REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
_FS_MAKE = sum(1 << b for b in range(6, 13))   # char, dir, reg, sock, fifo, block, sym
_FS_REFER, _FS_TRUNCATE = 1 << 13, 1 << 14
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS, _PR_SET_CHILD_SUBREAPER = 1, 4, 38, 36
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CLONE_NEWNET = 0x40000000

_libc = None


def _lib():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def prctl(option: int, value: int) -> None:
    """prctl(option, value) on Linux; nothing elsewhere."""
    if sys.platform.startswith("linux"):
        _lib().prctl(option, value, 0, 0, 0)


def protect_process() -> bool:
    """Make this process non-dumpable (Linux): its /proc/<pid>/environ, mem, maps and fd
    become readable only by root, and no process of the same user can ptrace it. Called by
    every process that holds what a candidate must not read (the executor's process with the
    user's keys; the judge's timer and reference worker). Children get the default back when
    they exec. Returns whether it applied."""
    if not sys.platform.startswith("linux"):
        return False
    return _lib().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def dumpable() -> bool:
    """Whether this process is dumpable (see protect_process); True where it cannot be told."""
    if not sys.platform.startswith("linux"):
        return True
    return _lib().prctl(3, 0, 0, 0, 0) != 0   # PR_GET_DUMPABLE


def become_subreaper() -> None:
    """Orphaned descendants of this process are re-parented to it (Linux), not to init."""
    prctl(_PR_SET_CHILD_SUBREAPER, 1)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none, or not Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        v = _lib().syscall(_SYS_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(v), 0)


def _write_rights(abi: int) -> int:
    rights = _FS_WRITE_FILE | _FS_REMOVE_DIR | _FS_REMOVE_FILE | _FS_MAKE
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    return rights


def landlock_ruleset(writable: Sequence[str | os.PathLike], abi: int | None = None) -> tuple[int, list[str]]:
    """A Landlock ruleset fd (close-on-exec) that allows writing only under `writable` (and
    writing, not creating, device files under /dev), blocks TCP and scopes signals and abstract
    unix sockets as far as the ABI allows. Returns (fd, what it restricts); fd -1 when Landlock
    is not available."""
    abi = landlock_abi() if abi is None else abi
    if abi < 1:
        return -1, []
    libc = _lib()
    handled = _write_rights(abi)
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", handled, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled, net)
    else:
        attr = struct.pack("=Q", handled)
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = libc.syscall(_SYS_CREATE, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        return -1, []
    rules = [(str(p), handled) for p in writable] + [("/dev", _FS_WRITE_FILE | (_FS_TRUNCATE if abi >= 3 else 0))]
    for path, rights in rules:
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, pfd), 12)
            if libc.syscall(_SYS_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH), rule,
                            ctypes.c_uint32(0)) != 0:
                os.close(fd)
                return -1, []
        finally:
            os.close(pfd)
    what = ["filesystem writes"] + (["tcp"] if net else []) + (["signals", "abstract unix sockets"] if scoped else [])
    return fd, what


# ----------------------------------------------------------------------- another user
#: Set WB_WORKER_USER=same to keep workers under the executor's user where it runs as root
#: (for a machine where the unprivileged user cannot reach the GPU or the Python install).
WORKER_USER_ENV = "WB_WORKER_USER"
_identity: tuple[int, int] | None | bool = False   # False: not decided yet
_identity_why = ""


def _others_can_read(path: str | os.PathLike) -> bool:
    """Whether a user who is neither the owner nor in the group can reach `path` (every
    directory above it searchable, the path itself readable)."""
    import stat

    p = Path(path).resolve()
    for d in [*reversed(p.parents), p]:
        try:
            mode = d.stat().st_mode
        except OSError:
            return False
        need = stat.S_IXOTH if d.is_dir() else stat.S_IROTH
        if not mode & need:
            return False
    return True


def worker_identity(check=None) -> tuple[int, int] | None:
    """(uid, gid) the workers run as, or None for the executor's own user.

    Another user only where this process is root on Linux, a `nobody` user exists,
    WB_WORKER_USER is not "same", the Python install and the repository are readable by
    others, and a process started as that user can import torch and the worker and, on a GPU
    machine, map the judge's device memory and events (`check`: a function of (uid, gid)
    returning an error text or "", run once per process; default: subprocesses). Decided once
    per process; `describe()` says why."""
    global _identity, _identity_why
    if _identity is not False:
        return _identity
    _identity, _identity_why = None, ""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        _identity_why = "the executor does not run as root"
        return None
    if os.environ.get(WORKER_USER_ENV, "") == "same":
        _identity_why = f"{WORKER_USER_ENV}=same"
        return None
    import pwd

    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        _identity_why = "no user nobody"
        return None
    root = Path(__file__).resolve().parents[2]
    unreadable = [str(p) for p in (sys.prefix, sys.base_prefix, root) if not _others_can_read(p)]
    if unreadable:
        _identity_why = f"not readable by other users: {', '.join(unreadable)}"
        return None
    err = (check or _import_as)(pw.pw_uid, pw.pw_gid)
    if err:
        _identity_why = f"a process as nobody could not start the worker: {err[-300:]}"
        return None
    _identity = (pw.pw_uid, pw.pw_gid)
    return _identity


def _import_as(uid: int, gid: int) -> str:
    """'' when a process running as uid:gid imports torch, triton and the worker, else why not."""
    import subprocess
    import tempfile

    root = str(Path(__file__).resolve().parents[2])
    with tempfile.TemporaryDirectory(prefix="wb_user_check_") as tmp:
        os.chown(tmp, uid, gid)
        env = minimal_env(dict(os.environ, PYTHONPATH=root), tmp)

        def drop() -> None:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        try:
            p = subprocess.run([sys.executable, "-c", "import torch, triton, workbench.execution.worker"],
                               env=env, cwd=tmp, capture_output=True, text=True, timeout=300, preexec_fn=drop)
            if p.returncode == 0 and os.path.isdir("/proc/driver/nvidia/gpus"):
                # On a GPU machine the worker must also map the judge's memory and events (CUDA IPC).
                p = subprocess.run([sys.executable, "-m", "workbench.execution.gate_cuda", "--selftest", str(uid),
                                    str(gid)], env=dict(env, HOME=tmp), cwd=tmp, capture_output=True, text=True,
                                   timeout=600)
        except (OSError, subprocess.SubprocessError) as e:
            return f"{type(e).__name__}: {e}"
    return "" if p.returncode == 0 else (p.stderr or p.stdout or f"exit {p.returncode}").strip()


def hand_over(paths: Sequence[str | os.PathLike], identity: tuple[int, int] | None, tree: bool = False) -> None:
    """Give `paths` (directories or files) to the workers' user (`identity`; None: nothing to
    do); `tree`: everything below each directory too."""
    if identity is None:
        return
    uid, gid = identity
    for p in paths:
        if not os.path.exists(p):
            continue
        items = [str(p)]
        if tree and os.path.isdir(p):
            for base, dirs, files in os.walk(p):
                items += [os.path.join(base, n) for n in dirs + files]
        for it in items:
            try:
                os.chown(it, uid, gid, follow_symlinks=False)
            except OSError:
                pass


# ----------------------------------------------------------------------- the worker's start
#: Per-worker limits: CPU seconds, processes/threads of the user (only set where the worker
#: runs under its own user, since the limit counts every process of the user).
CPU_SECONDS = 3600


def preexec(ruleset_fd: int, file_size_bytes: int, cpu_mem_bytes: int | None = None,
            cpus: Sequence[int] | None = None, identity: tuple[int, int] | None = None):
    """The function the worker runs between fork and exec (only system calls, no imports):
    its user (`identity`, before the death signal, which a change of user clears; as root
    without one, an empty capability bounding set), the death signal, CPU affinity, resource
    limits and no new privileges."""
    libc = _lib()
    linux = sys.platform.startswith("linux")

    def fn() -> None:
        if identity is not None:
            os.setgroups([])
            os.setgid(identity[1])
            os.setuid(identity[0])
        elif linux and os.geteuid() == 0:
            # Root without a user to switch to: no capabilities at all after exec (an empty
            # bounding set), so the worker cannot read or trace non-dumpable processes of the
            # executor's user, nor override file permissions.
            for cap in range(64):
                libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
            libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        if linux:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if cpus and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, cpus)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_bytes, file_size_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
        if cpu_mem_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (cpu_mem_bytes, cpu_mem_bytes))
        if ruleset_fd >= 0 and linux and libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(121)
    return fn


#: Where the worker finds its Landlock ruleset (set up by the supervisor), if there is one.
RULESET_FD = 4


def restrict_self() -> bool:
    """Enter the Landlock domain of the ruleset at RULESET_FD, if the supervisor passed one.

    The worker calls this once its own start-up is done (torch imported; on a GPU the CUDA
    driver initialised and a context made, which writes under /proc) and before any candidate
    code is imported. Returns whether a domain was entered; exits the process if a ruleset was
    passed but could not be applied (a worker must not measure uncontained by accident)."""
    try:
        os.fstat(RULESET_FD)
    except OSError:
        return False
    if _lib().syscall(_SYS_RESTRICT, ctypes.c_int(RULESET_FD), ctypes.c_uint32(0)) != 0:
        print("worker: the Landlock ruleset could not be applied", file=sys.stderr, flush=True)
        os._exit(122)
    os.close(RULESET_FD)
    return True


def _netns_possible() -> bool:
    return sys.platform.startswith("linux") and os.geteuid() == 0


def supervisor_preexec():
    """The supervisor's start (after Popen's start_new_session): a network namespace where
    root can make one."""
    libc = _lib()
    netns = _netns_possible()

    def fn() -> None:
        if netns:
            libc.unshare(_CLONE_NEWNET)  # failure leaves the network as it was; describe() says so
    return fn


def describe() -> dict[str, str]:
    """What containment the executor applies on this machine (recorded with results)."""
    abi = landlock_abi()
    ident = worker_identity()
    return {
        "environment": "allow-list (no keys or tokens)",
        "limits": f"cpu {CPU_SECONDS} s, file size, no core dumps",
        "filesystem": f"landlock ABI {abi}: writes only to the work dir, build caches, GPU locks"
        if abi >= 1 else "not contained (no Landlock on this kernel): writes anywhere the user can",
        "network": ("network namespace (loopback only)" if _netns_possible() else "")
        + ("; landlock: no TCP" if abi >= 4 else "")
        or "not contained (no network namespace, Landlock ABI < 4)",
        "signals": "landlock scope: no signal outside the worker's domain" if abi >= 6
        else "not contained (Landlock ABI < 6): a candidate can signal processes of the same user",
        "processes": "supervisor subreaper: descendants are killed with the worker",
        "start": "CPU: forked from a template that has imported torch and triton (template.py); GPU: exec'd"
        + (" (WB_WORKER_TEMPLATE=1: forked)" if os.environ.get("WB_WORKER_TEMPLATE") == "1" else "")
        if sys.platform.startswith("linux") and os.environ.get("WB_WORKER_TEMPLATE") != "0"
        else "exec'd (a fresh interpreter per worker)",
        "user": (f"workers run as uid {ident[0]} (nobody)" if ident else
                 f"workers run as the executor's user ({_identity_why or 'not root'})"
                 + ("; as root without any capability" if sys.platform.startswith("linux") and os.geteuid() == 0
                    else "")),
        "parent memory": ("executor, timer and reference worker non-dumpable (environ, mem, fd closed to "
                          "other processes of the user)" if sys.platform.startswith("linux")
                          else "not protected (no prctl on this platform)"),
    }


# ----------------------------------------------------------------------- the supervisor
def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            out += [int(x) for x in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except (OSError, ValueError):
            pass
    return out


def live_children(pid: int | None = None) -> list[int]:
    """Child processes of `pid` (default: this process) that are not zombies."""
    pid = os.getpid() if pid is None else pid
    alive = []
    for c in _children(pid):
        try:
            state = Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(c)
    return alive


def kill_descendants(pid: int | None = None, rounds: int = 50) -> int:
    """SIGKILL every child of `pid` (a subreaper: orphans land here) until none is left; reap
    them when `pid` is this process. Returns how many were killed."""
    me = os.getpid() if pid is None else pid
    killed = 0
    for _ in range(rounds):
        kids = _children(me)
        if not kids:
            break
        for c in kids:
            try:
                os.kill(c, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        if me == os.getpid():
            while True:
                try:
                    r, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if r == 0:
                    time.sleep(0.01)
                    if not _children(me):
                        break
    return killed


#: Where the worker finds its end of the judge's link (set up by the supervisor), if any.
LINK_FD = 5


def place_fds(spec: str) -> tuple[tuple[int, ...], int, int, int | None, list[int] | None, tuple[int, int] | None]:
    """Move the descriptors named in a supervisor spec ("RULESET:FSIZE:MEM:CPUS:CHANNEL:LINK:UID:GID",
    see supervisor_spec) to the worker's fixed numbers (CHANNEL_FD, RULESET_FD, LINK_FD).
    Returns (those numbers, the ruleset's number or -1, file size limit, memory limit or None,
    CPUs or None, (uid, gid) or None)."""
    import fcntl

    from workbench.execution.protocol import CHANNEL_FD

    ruleset, fsize, mem, cpus, channel, link, uid, gid = spec.split(":")
    wanted = {int(channel): CHANNEL_FD, int(ruleset): RULESET_FD, int(link): LINK_FD}
    wanted.pop(-1, None)
    # Move all out of the way, then to their fixed numbers.
    moved = {fd: fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in wanted}
    for fd in moved:
        os.close(fd)
    for fd, target in wanted.items():
        os.dup2(moved[fd], target)
        os.close(moved[fd])
    targets = tuple(wanted.values())
    return (targets, RULESET_FD if RULESET_FD in targets else -1, int(fsize), int(mem) or None,
            [int(c) for c in cpus.split(",") if c] or None, (int(uid), int(gid)) if uid else None)


def supervise(argv: list[str]) -> int:
    """Run the worker command as a child of this subreaper and exit with its status: its exit
    code, or 128 + the signal that killed it. argv: the spec (see place_fds) then the worker's
    command line. The channel descriptor becomes the worker's CHANNEL_FD and the link its
    LINK_FD; standard input (its jobs) and output pass through; UID:GID (empty: this process's
    user) is the user the worker runs as."""
    import subprocess

    become_subreaper()
    targets, ruleset_fd, fsize, mem, cpus, identity = place_fds(argv[0])
    proc = subprocess.Popen(argv[1:], pass_fds=targets,
                            preexec_fn=preexec(ruleset_fd, fsize, mem, cpus, identity))
    return wait_worker(proc.pid, targets)


def wait_worker(pid: int, targets: Sequence[int]) -> int:
    """The supervisor's part once its worker `pid` runs: close the worker's descriptors
    (`targets`) here, kill the worker on SIGTERM or SIGINT, wait for it, kill every descendant
    left, and return its status as supervise does (exit code, or 128 + the signal)."""
    for fd in targets:
        os.close(fd)
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:    # reaped elsewhere: as Popen.wait, a status of 0
            status = 0
            break
        except InterruptedError:
            continue
    kill_descendants()
    rc = os.waitstatus_to_exitcode(status)
    return rc if rc >= 0 else 128 - rc


def supervisor_spec(ruleset_fd: int, file_size_bytes: int, cpu_mem_bytes: int | None, cpus: Sequence[int] | None,
                    channel_fd: int = -1, link_fd: int = -1, identity: tuple[int, int] | None = None) -> str:
    """The supervisor's first argument: the worker's descriptors (numbers in the starting
    process), limits and user (see place_fds)."""
    uid, gid = identity if identity else ("", "")
    return (f"{ruleset_fd}:{file_size_bytes}:{cpu_mem_bytes or 0}:{','.join(map(str, cpus or []))}"
            f":{channel_fd}:{link_fd}:{uid}:{gid}")


def supervisor_argv(worker_argv: list[str], ruleset_fd: int, file_size_bytes: int,
                    cpu_mem_bytes: int | None, cpus: Sequence[int] | None, channel_fd: int = -1,
                    link_fd: int = -1, identity: tuple[int, int] | None = None) -> list[str]:
    """The command line that starts `worker_argv` under a supervisor."""
    return supervisor_command(supervisor_spec(ruleset_fd, file_size_bytes, cpu_mem_bytes, cpus, channel_fd, link_fd,
                                              identity), worker_argv)


def supervisor_command(spec: str, worker_argv: list[str]) -> list[str]:
    """The command line of a supervisor with this spec (see supervisor_spec) over `worker_argv`."""
    return [sys.executable, "-m", "workbench.execution.contain", spec, *worker_argv]


def decode_exit(rc: int | None) -> int | None:
    """The worker's return code in Popen's convention (negative: killed by that signal) from
    the supervisor's; a supervisor killed itself keeps its own negative code."""
    if rc is not None and rc > 128 and rc - 128 < 65:
        return -(rc - 128)
    return rc


if __name__ == "__main__":
    try:
        sys.exit(supervise(sys.argv[1:]))
    except OSError as e:
        print(f"supervisor: {e}", file=sys.stderr)
        sys.exit(125 if e.errno != errno.ENOENT else 127)
