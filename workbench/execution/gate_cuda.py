"""The GPU half of the gate (gate.py): device memory shared by CUDA IPC, interprocess events,
the timer's clock of CUDA events, and a probe that tells whether another process keeps the GPU
busy. Everything that differs from the CPU gate is here.

Memory: the timer allocates each arena with cuMemAlloc (its own allocation, not a block of
torch's caching allocator, so the worker's mapping covers the arena and nothing else of the
timer) and exports it with cuIpcGetMemHandle; the worker maps it with cuIpcOpenMemHandle.
Both wrap the pointer as a torch tensor through __cuda_array_interface__. Events:
torch.cuda.Event(interprocess=True), shared with ipc_handle() / Event.from_ipc_handle().

The clock, per call (CudaClock):

    timer stream:  spin ─ inputs ─ poison ─ L2 flush ─ E0 ─ E_go ──────────── wait(E_done) ─ E1
    worker stream:                               wait(E_go) ─ forward ─ copy out ─ E_done

The spin lasts a little longer than the host needs from recording E_go until the timer has
enqueued its wait (the "call" message, the worker's enqueue, the reply), so the worker's work
starts on the device right after E0 and the host's latency stays outside E1 - E0. The inputs
are written after the spin: work a worker starts before E_go reads the previous call's inputs.
"""
from __future__ import annotations

import ctypes
import math
import time
from pathlib import Path
from typing import Callable

_lib = None


class _IpcHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_char * 64)]


def handle_hex(h: _IpcHandle) -> str:
    """All 64 bytes of an IPC handle as hex (a c_char array field reads only up to its first
    NUL, so the bytes come from the structure's own buffer)."""
    return ctypes.string_at(ctypes.addressof(h), ctypes.sizeof(h)).hex()


def handle_from_hex(text: str) -> _IpcHandle:
    raw = bytes.fromhex(text)
    if len(raw) != ctypes.sizeof(_IpcHandle):
        raise ValueError(f"an IPC handle of {len(raw)} bytes, not {ctypes.sizeof(_IpcHandle)}")
    return _IpcHandle.from_buffer_copy(raw)


def _cu():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL("libcuda.so.1")
        ptr = ctypes.POINTER(ctypes.c_uint64)
        lib.cuMemAlloc_v2.argtypes = [ptr, ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_IpcHandle), ctypes.c_uint64]
        opener = getattr(lib, "cuIpcOpenMemHandle_v2", None) or lib.cuIpcOpenMemHandle
        opener.argtypes = [ptr, _IpcHandle, ctypes.c_uint]
        lib.wb_open = opener
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        lib.cuMemGetAddressRange_v2.argtypes = [ptr, ctypes.POINTER(ctypes.c_size_t), ctypes.c_uint64]
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        _lib = lib
    return _lib


def _check(rc: int, what: str) -> None:
    if rc != 0:
        name = ctypes.c_char_p()
        _cu().cuGetErrorName(rc, ctypes.byref(name))
        raise RuntimeError(f"{what} failed: {(name.value or b'?').decode()} ({rc})")


def _context() -> None:
    """torch's primary context made current on this thread (the driver calls need it)."""
    import torch

    torch.zeros(1, device="cuda")


def tensor_at(ptr: int, nbytes: int):
    """A flat uint8 torch tensor over `nbytes` of device memory at `ptr` (not owned)."""
    import torch

    class _Mem:
        __cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                    "version": 3, "strides": None}

    return torch.as_tensor(_Mem(), device=f"cuda:{torch.cuda.current_device()}")


class DeviceArena:
    """`nbytes` of device memory the timer shares with one worker (see module doc)."""

    def __init__(self, nbytes: int):
        _context()
        self.nbytes = nbytes
        self.ptr = ctypes.c_uint64()
        _check(_cu().cuMemAlloc_v2(ctypes.byref(self.ptr), nbytes), "cuMemAlloc")
        self.base = tensor_at(self.ptr.value, nbytes)

    def export(self) -> tuple[dict, list[int]]:
        h = _IpcHandle()
        _check(_cu().cuIpcGetMemHandle(ctypes.byref(h), self.ptr.value), "cuIpcGetMemHandle")
        return {"kind": "cuda", "handle": handle_hex(h), "nbytes": self.nbytes}, []

    def close(self) -> None:
        """Free the memory; only once the worker that mapped it is gone (or has unmapped it)."""
        import torch

        if self.ptr.value:
            torch.cuda.synchronize()
            self.base = None
            _cu().cuMemFree_v2(self.ptr.value)
            self.ptr = ctypes.c_uint64()


def open_device_arena(info: dict, fds: list[int]):
    """The worker's mapping of a DeviceArena (a flat uint8 tensor)."""
    _context()
    h = handle_from_hex(info["handle"])
    ptr = ctypes.c_uint64()
    _check(_cu().wb_open(ctypes.byref(ptr), h, 1), "cuIpcOpenMemHandle")   # lazy peer access
    return tensor_at(ptr.value, int(info["nbytes"]))


def close_device_arena(base) -> None:
    """Unmap a worker's mapping (the clean reference worker does, before the timer frees)."""
    import torch

    torch.cuda.synchronize()
    _cu().cuIpcCloseMemHandle(base.data_ptr())


def share_outputs(tensors: list) -> list[dict | None]:
    """The worker's side: where each output tensor lives, as the judge can map it (the IPC
    handle of the allocation that holds it, the offset in it, the allocation's size)."""
    out: list[dict | None] = []
    for t in tensors:
        if t is None or t.numel() == 0:
            out.append(None)
            continue
        ptr = t.data_ptr()
        base, size = ctypes.c_uint64(), ctypes.c_size_t()
        _check(_cu().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr), "cuMemGetAddressRange")
        h = _IpcHandle()
        _check(_cu().cuIpcGetMemHandle(ctypes.byref(h), base.value), "cuIpcGetMemHandle")
        out.append({"handle": handle_hex(h), "offset": ptr - base.value, "size": int(size.value)})
    return out


class Imports:
    """The timer's side: a worker's shared outputs mapped (cuIpcOpenMemHandle once per
    allocation; a caching allocator hands a worker the same blocks call after call), the
    least recently used unmapped beyond `cap`."""

    def __init__(self, cap: int = 64):
        from collections import OrderedDict

        self.cap = cap
        self.maps: OrderedDict[str, int] = OrderedDict()

    def tensor(self, shared: dict | None, entry: dict):
        """The output described by the layout `entry`, where the worker said it is (`shared`)."""
        import torch

        dt = getattr(torch, entry["dtype"])
        n = math.prod(entry["shape"]) * torch.empty(0, dtype=dt).element_size()
        if n == 0:
            return torch.empty(entry["shape"], dtype=dt, device="cuda")
        if not isinstance(shared, dict) or not isinstance(shared.get("handle"), str):
            raise ValueError("no memory named for a tensor output")
        off, size = int(shared["offset"]), int(shared["size"])
        if off < 0 or off + n > size:
            raise ValueError(f"an output of {n} bytes at offset {off} does not fit its allocation of {size}")
        h = shared["handle"]
        if h not in self.maps:
            while len(self.maps) >= self.cap:
                _, old = self.maps.popitem(last=False)
                torch.cuda.synchronize()
                _cu().cuIpcCloseMemHandle(old)
            handle = handle_from_hex(h)
            ptr = ctypes.c_uint64()
            _check(_cu().wb_open(ctypes.byref(ptr), handle, 1), "cuIpcOpenMemHandle")
            self.maps[h] = ptr.value
        self.maps.move_to_end(h)
        return tensor_at(self.maps[h] + off, n).view(dt).view(entry["shape"])

    def close(self) -> None:
        import torch

        if self.maps:
            torch.cuda.synchronize()
        for ptr in self.maps.values():
            _cu().cuIpcCloseMemHandle(ptr)
        self.maps.clear()


class Spin:
    """GPU spin of a given length on the current stream (torch.cuda._sleep, calibrated once)."""

    def __init__(self) -> None:
        import torch

        self._torch = torch
        cycles = 2_000_000
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        torch.cuda.synchronize()
        self.cycles_per_ms = cycles / max(start.elapsed_time(end), 1e-3)

    def __call__(self, ms: float) -> None:
        self._torch.cuda._sleep(int(ms * self.cycles_per_ms))


class CudaClock:
    """The timer's clock for one link (see module doc). `flush` empties the L2 cache."""

    #: The spin covers the host's part of a call (a message each way, the worker's enqueue: a
    #: few hundred microseconds; a spin shorter than that leaves E1 enqueued late, a longer one
    #: changes nothing but the wall time). It follows 2.5 times a decaying maximum of the
    #: link's host time, at least 1 ms.
    MIN_SPIN_MS, MAX_SPIN_MS, SPIN_FACTOR = 1.0, 5.0, 2.5

    def __init__(self, spin: Spin, flush: Callable[[], None]):
        import torch

        self._torch = torch
        self.spin, self.flush = spin, flush
        self.go = torch.cuda.Event(interprocess=True)
        self.done = torch.cuda.Event(interprocess=True)
        self.e0, self.e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.host_ms = 1.0
        self._t_go = 0.0

    def export(self) -> dict:
        return {"kind": "cuda", "go": bytes(self.go.ipc_handle()).hex(), "done": bytes(self.done.ipc_handle()).hex()}

    def arm(self, prep: Callable[[], None], timed: bool = True) -> None:
        self.spin(min(max(self.SPIN_FACTOR * self.host_ms, self.MIN_SPIN_MS), self.MAX_SPIN_MS))
        prep()
        self.flush()
        self.e0.record()
        self.go.record()
        self._t_go = time.perf_counter()

    def stop(self) -> None:
        self.done.wait()
        self.e1.record()
        self.host_ms = max(1e3 * (time.perf_counter() - self._t_go), 0.9 * self.host_ms)

    def elapsed_ms(self, deadline: float) -> float:
        """E1 - E0 once E1 completed; TimeoutError when the worker's work outlives `deadline`
        (time.monotonic()): the timer's stream then waits on it for good, and the timer ends."""
        while not self.e1.query():
            if time.monotonic() > deadline:
                raise TimeoutError("the call's GPU work did not finish in time")
            time.sleep(2e-5)
        return self.e0.elapsed_time(self.e1)


class CudaSync:
    """The worker's side of the GPU gate: its stream waits on E_go before the call and records
    E_done after it; its own events around the call are a diagnostic only (`self_ms`)."""

    def __init__(self, info: dict):
        import torch

        self._torch = torch
        dev = torch.device("cuda", torch.cuda.current_device())
        self.go = torch.cuda.Event.from_ipc_handle(dev, bytes.fromhex(info["go"]))
        self.done = torch.cuda.Event.from_ipc_handle(dev, bytes.fromhex(info["done"]))
        self._pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(2)]
        self._k = 0

    def before(self) -> None:
        s = self._torch.cuda.current_stream()
        self.go.wait(s)
        self._pairs[self._k % 2][0].record(s)

    def after(self) -> None:
        s = self._torch.cuda.current_stream()
        self._pairs[self._k % 2][1].record(s)
        self.done.record(s)
        self._k += 1

    def self_ms(self) -> float | None:
        """The previous call's own event time (complete: the timer waited for it)."""
        if self._k < 2:
            return None
        a, b = self._pairs[self._k % 2]
        try:
            return a.elapsed_time(b) if b.query() else None
        except RuntimeError:
            return None


class BusyProbe:
    """Whether another process keeps the GPU busy: the host's wall time for a fixed amount of
    the timer's own work, against the same measured when the timer started. Work of another
    context shares the GPU by time slices, so the wall time grows while event times inside
    the timer's own slice would not."""

    def __init__(self, work: Callable[[], None], repeats: int = 8):
        self.work, self.repeats = work, repeats
        self.base_ms = min(self._once() for _ in range(5))

    def _once(self) -> float:
        import torch

        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(self.repeats):
            self.work()
        torch.cuda.synchronize()
        return 1e3 * (time.perf_counter() - t0)

    def ratio(self) -> float:
        """This moment's wall time over the calibrated one (best of 3)."""
        return min(self._once() for _ in range(3)) / max(self.base_ms, 1e-3)


# --------------------------------------------------------------------------- self-test
_IMPORTER = """
import ctypes, sys, tempfile, torch
from workbench.execution import contain, gate_cuda
torch.zeros(1, device="cuda")                      # the worker's context, made before Landlock
if sys.argv[3] == "1":
    fd, _ = contain.landlock_ruleset([tempfile.gettempdir()])
    libc = ctypes.CDLL(None, use_errno=True)
    if fd < 0 or libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(446, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
        print("landlock could not be applied"); sys.exit(3)
base = gate_cuda.open_device_arena({"handle": sys.argv[1], "nbytes": 1 << 20}, [])
ev = torch.cuda.Event.from_ipc_handle(torch.device("cuda", 0), bytes.fromhex(sys.argv[2]))
base[:4].fill_(42)
ev.record()
torch.cuda.synchronize()
print("child ok")
"""


def ipc_check(protect: bool, importer: str, landlock: bool) -> str:
    """"" when a process started as `importer` ("same": this user as it is; "capless": this
    user without capabilities, as a root worker runs; "nobody") and, with `landlock`, inside a
    Landlock domain, maps this process's device memory and records its interprocess event,
    this process being non-dumpable when `protect` (as the judge's timer is); else what failed."""
    import os
    import subprocess
    import sys

    import torch

    from workbench.execution import contain

    if protect:
        contain.protect_process()
    else:
        contain.prctl(contain._PR_SET_DUMPABLE, 1)
    arena = DeviceArena(1 << 20)
    arena.base.zero_()
    done = torch.cuda.Event(interprocess=True)
    info, _ = arena.export()
    identity = None
    if importer == "nobody":
        import pwd

        pw = pwd.getpwnam("nobody")
        identity = (pw.pw_uid, pw.pw_gid)
    pre = None if importer == "same" else contain.preexec(-1, 2**30, None, None, identity)
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=root + (os.pathsep + os.environ["PYTHONPATH"]
                                               if os.environ.get("PYTHONPATH") else ""))
    try:
        p = subprocess.run([sys.executable, "-c", _IMPORTER, info["handle"], bytes(done.ipc_handle()).hex(),
                            "1" if landlock else "0"], capture_output=True, text=True, timeout=300, preexec_fn=pre,
                           env=env)
        torch.cuda.synchronize()
        ok = p.returncode == 0 and int(arena.base[0]) == 42
        return "" if ok else f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-600:]}"
    finally:
        arena.close()


def ipc_matrix() -> dict[str, str]:
    """ipc_check over the judge's own configuration and each of its factors alone ("ok" or the
    failure): which of non-dumpable exporter, importer without capabilities, importer as
    nobody, importer under Landlock keeps CUDA IPC from working, if any."""
    import os

    cases = [("timer protected, worker capless under landlock (the root executor's setup)", True, "capless", True),
             ("plain processes of one user", False, "same", False),
             ("timer protected", True, "same", False),
             ("worker without capabilities", False, "capless", False),
             ("worker under landlock", False, "same", True)]
    if os.geteuid() == 0:
        cases += [("worker as nobody", False, "nobody", False),
                  ("timer protected, worker as nobody under landlock", True, "nobody", True)]
    return {name: (ipc_check(*args) or "ok") for name, *args in cases}


def _selftest(uid: int, gid: int) -> int:
    """The judge's setup with workers as nobody (see contain.worker_identity): prints "ok" or
    the failure; exit status 0 or 1. (uid, gid) must be nobody's."""
    import pwd

    if pwd.getpwnam("nobody").pw_uid != uid:
        print(f"failed: the self-test checks user nobody, not uid {uid}")
        return 1
    err = ipc_check(True, "nobody", True)
    print(f"failed: {err}" if err else "ok")
    return 1 if err else 0


if __name__ == "__main__":
    import json
    import sys

    if sys.argv[1:2] == ["--selftest"]:
        sys.exit(_selftest(int(sys.argv[2]), int(sys.argv[3])))
    if sys.argv[1:2] == ["--matrix"]:
        print(json.dumps(ipc_matrix()))


class SmClock:
    """The current SM clock (MHz) of the GPU this process uses, read through NVML (the
    driver's libnvidia-ml.so.1, by ctypes). The judge samples it beside each reference call,
    so a report can tell a GPU that ran at lower clocks beside a candidate (power or thermal
    limits under its load) from one that did not. `read()` is None where NVML or the device
    cannot be reached; nothing here raises after construction."""

    def __init__(self) -> None:
        import torch

        self.handle = None
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            bus = f"{int(getattr(p, 'pci_domain_id', 0)):08x}:{int(p.pci_bus_id):02x}:{int(p.pci_device_id):02x}.0"
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByPciBusId_v2(bus.encode(), ctypes.byref(h)) != 0:
                return
            self.lib, self.handle = lib, h
        except Exception:  # noqa: BLE001 - no NVML, no clock: the report goes without it
            self.handle = None

    def read(self) -> float | None:
        if self.handle is None:
            return None
        mhz = ctypes.c_uint()
        if self.lib.nvmlDeviceGetClockInfo(self.handle, 1, ctypes.byref(mhz)) != 0:   # 1: NVML_CLOCK_SM
            return None
        return float(mhz.value)
