"""The gate: the judge's timer runs one call of a model in another process, on inputs it
wrote, into outputs it owns, and takes the time with its own clock.

Two processes meet at a gate: the timer (timer.py, which never imports candidate code) and a
worker (the candidate's chunk worker, or the clean reference worker). They share one arena of
memory per link: the timer's input and output buffers for each shape ("slot"). For one call:

    timer:  write fresh inputs, poison the outputs ─┐  (outside the timed region)
            start the clock, "call" ────────────────┼──▶ worker: forward on the shared inputs,
                                                    │            copy into the shared outputs,
            stop the clock ◀── "enqueued" ──────────┘            reply
            (checked calls: copy the outputs and the inputs at once)

On the CPU the clock is the timer's monotonic clock around the call and its reply. On a GPU
(gate_cuda.py) the arena is device memory shared by CUDA IPC, the timer's stream spins while
the worker enqueues, records its own timing event E0 and an interprocess event E_go; the
worker's stream waits on E_go, runs the call and records the interprocess event E_done; the
timer's stream waits on E_done and records E1. The sample is E1 - E0, taken in the timer.

Nothing a worker does can move the timer's clock: it can only be late (which makes its own
time longer) or leave work unfinished (which the copies taken right after the clock stopped
show as unwritten or wrong outputs). Messages are framed JSON (protocol.py) over a unix socket;
a descriptor (the CPU arena) travels with SCM_RIGHTS in lockstep, so no frame is read ahead.
"""
from __future__ import annotations

import math
import mmap
import os
import signal
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from workbench.execution import protocol

ALIGN = 512          # bytes: every buffer of an arena starts at a multiple of this


class LinkClosed(Exception):
    """The other end of a link closed it (its process ended)."""


class LinkTimeout(Exception):
    """No message within the time allowed."""


class Link:
    """Framed JSON messages over a connected unix stream socket, with descriptors passed in
    lockstep (`send_fds` only after the receiver asked for them)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.reader = protocol.FrameReader(sock.fileno())

    @classmethod
    def from_fd(cls, fd: int) -> Link:
        return cls(socket.socket(fileno=fd))

    def send(self, obj: dict) -> None:
        protocol.send(self.sock.fileno(), obj)

    def recv(self, timeout_s: float | None) -> dict:
        """The next message; LinkTimeout after `timeout_s` (None: wait forever), LinkClosed at
        the end of the stream, protocol.ProtocolError for a malformed frame."""
        msg = self.reader.read(timeout_s)
        if msg is None:
            if self.reader.eof:
                raise LinkClosed("the other end closed the link")
            raise LinkTimeout(f"no message within {timeout_s:.1f} s")
        return msg

    def send_fds(self, fds: Sequence[int]) -> None:
        socket.send_fds(self.sock, [b"F"], list(fds))

    def recv_fds(self, n: int) -> list[int]:
        _, fds, _, _ = socket.recv_fds(self.sock, 1, n)
        return list(fds)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# --------------------------------------------------------------------------- layout
def dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def _value(v: Any) -> Any:
    """A plain value as JSON carries it; anything else cannot cross the gate."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)) and all(x is None or isinstance(x, (bool, int, float, str)) for x in v):
        return list(v)
    raise TypeError(f"a value of type {type(v).__name__} cannot be passed through the gate")


def entries(items: Sequence[Any], offset: int) -> tuple[list[dict], int]:
    """Layout entries for `items` (tensors, plain values, or entries made elsewhere: dicts
    with "kind") placed from `offset`; returns (entries, the offset after them)."""
    import torch

    out = []
    for x in items:
        if isinstance(x, dict) and x.get("kind") == "tensor":      # an entry already (from another process)
            dt = getattr(torch, x["dtype"])
            n = math.prod(x["shape"]) * torch.empty(0, dtype=dt).element_size()
            e = {"kind": "tensor", "shape": list(x["shape"]), "dtype": x["dtype"], "contiguous": bool(x["contiguous"])}
        elif isinstance(x, dict) and x.get("kind") == "value":
            out.append({"kind": "value", "value": _value(x.get("value"))})
            continue
        elif isinstance(x, torch.Tensor):
            n = x.numel() * x.element_size()
            e = {"kind": "tensor", "shape": list(x.shape), "dtype": dtype_name(x), "contiguous": bool(x.is_contiguous())}
        else:
            out.append({"kind": "value", "value": _value(x)})
            continue
        out.append({**e, "offset": offset, "nbytes": n})
        offset += -(-max(n, 1) // ALIGN) * ALIGN
    return out, offset


def make_layout(slots: dict[str, tuple[Sequence[Any], Sequence[Any]]], outputs_in_arena: bool = True) -> dict:
    """The arena's layout: per slot name, (example inputs, example outputs) -> entries.

    `outputs_in_arena` (the CPU gate): the worker copies its outputs into the arena. Without
    it (the GPU gate) output entries only describe the outputs (offset -1): the worker shares
    the memory its call wrote (gate_cuda.share_outputs), so no one's timed region holds a copy
    a worker could skip."""
    layout: dict[str, Any] = {"slots": {}, "outputs_in_arena": outputs_in_arena}
    off = 0
    for name, (ins, outs) in slots.items():
        ie, off = entries(ins, off)
        if outputs_in_arena:
            oe, off = entries(outs, off)
        else:
            oe = [{**e, "offset": -1} for e in entries(outs, 0)[0]]
        layout["slots"][name] = {"inputs": ie, "outputs": oe}
    layout["nbytes"] = max(off, ALIGN)
    return layout


def views(base, ents: Sequence[dict]) -> list:
    """Tensors over `base` (a flat uint8 tensor) for tensor entries; values for the others."""
    import torch

    out = []
    for e in ents:
        if e["kind"] != "tensor" or e["offset"] < 0:
            out.append(e.get("value"))
            continue
        dt = getattr(torch, e["dtype"])
        raw = base[e["offset"]:e["offset"] + e["nbytes"]]
        out.append(raw.view(dt).view(e["shape"]) if e["nbytes"] else torch.empty(e["shape"], dtype=dt,
                                                                                  device=base.device))
    return out


# --------------------------------------------------------------------------- arenas
class HostArena:
    """An arena in shared memory (the CPU path): an anonymous file mapped by both sides; its
    descriptor reaches the worker with SCM_RIGHTS and has no name anyone else could open."""

    def __init__(self, nbytes: int):
        import torch

        self.nbytes = nbytes
        if hasattr(os, "memfd_create"):
            self.fd = os.memfd_create("wb-gate", os.MFD_CLOEXEC)
        else:
            fh = tempfile.TemporaryFile()
            self.fd = os.dup(fh.fileno())
            fh.close()
        os.ftruncate(self.fd, nbytes)
        self._mm = mmap.mmap(self.fd, nbytes)
        self.base = torch.frombuffer(self._mm, dtype=torch.uint8)

    def export(self) -> tuple[dict, list[int]]:
        return {"kind": "host", "nbytes": self.nbytes}, [self.fd]

    def close(self) -> None:
        self.base = None
        try:
            os.close(self.fd)
        except OSError:
            pass


def open_host_arena(info: dict, fds: list[int]):
    """The worker's view of a HostArena (a flat uint8 tensor)."""
    import torch

    mm = mmap.mmap(fds[0], int(info["nbytes"]))
    os.close(fds[0])
    return torch.frombuffer(mm, dtype=torch.uint8)


def poison(tensors: Sequence[Any]) -> None:
    """Unwritten outputs must not pass for results: NaN in floats, random bytes elsewhere."""
    import torch

    for t in tensors:
        if isinstance(t, torch.Tensor) and t.numel():
            if t.is_floating_point():
                t.fill_(float("nan"))
            else:
                t.view(-1).view(torch.uint8).random_(0, 256)


def write_inputs(dst: Sequence[Any], src: Sequence[Any]) -> None:
    import torch

    for d, s in zip(dst, src):
        if isinstance(d, torch.Tensor):
            d.copy_(s)


def changed(now: Sequence[Any], pristine: Sequence[Any]):
    """A boolean tensor (not yet read, so nothing waits for it): whether any input tensor's
    bytes differ from `pristine`."""
    import torch

    flags = [(a.reshape(-1).view(torch.uint8) != b.reshape(-1).view(torch.uint8)).any()
             for a, b in zip(now, pristine) if isinstance(a, torch.Tensor) and a.numel()]
    return torch.stack(flags).any() if flags else None


# --------------------------------------------------------------------------- clocks
class HostClock:
    """The CPU gate's clock: the timer's perf_counter around the call and its reply."""

    def __init__(self) -> None:
        self.t0 = self.t1 = 0.0

    def arm(self, prep: Callable[[], None], timed: bool = True) -> None:
        prep()
        self.t0 = time.perf_counter()

    def stop(self) -> None:
        self.t1 = time.perf_counter()

    def elapsed_ms(self, deadline: float) -> float:
        return 1e3 * (self.t1 - self.t0)

    def export(self) -> dict:
        return {"kind": "host"}


class HostSync:
    """The worker's side of the CPU gate: nothing to wait for or record."""

    def before(self) -> None:
        pass

    def after(self) -> None:
        pass

    def self_ms(self) -> float | None:
        return None


# --------------------------------------------------------------------------- freezing
def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "X"


class Freezer:
    """Stops every process below `root` (the candidate worker's supervisor) with SIGSTOP while
    the reference or a null call is timed, and lets them go on with SIGCONT: a candidate's
    threads and processes cannot burn the CPU, enqueue GPU work or touch the shared memory
    while the reference runs. A process forked during a pass is caught by the next pass (a
    stopped parent forks no more)."""

    PASSES = 6

    def __init__(self, root: int | None):
        self.root = root
        self.stopped: list[int] = []

    def _tree(self) -> list[int]:
        from workbench.execution.contain import _children

        out, todo = [], list(_children(self.root)) if self.root else []
        while todo:
            p = todo.pop()
            if p not in out:
                out.append(p)
                todo += _children(p)
        return out

    def freeze(self) -> None:
        if not self.root:
            return
        for _ in range(self.PASSES):
            new = [p for p in self._tree() if p not in self.stopped]
            if not new:
                break
            for p in new:
                try:
                    os.kill(p, signal.SIGSTOP)
                    self.stopped.append(p)
                except (ProcessLookupError, PermissionError):
                    pass
        deadline = time.monotonic() + 0.05
        for p in self.stopped:
            while _state(p) not in ("T", "t", "X", "Z") and time.monotonic() < deadline:
                time.sleep(0.0002)

    def thaw(self) -> None:
        for p in self.stopped:
            try:
                os.kill(p, signal.SIGCONT)
            except (ProcessLookupError, PermissionError):
                pass
        self.stopped = []


# --------------------------------------------------------------------------- the worker's side
def _reply_error(status: str, reason: str) -> dict:
    return {"ok": False, "status": status, "reason": reason[:3000]}


def check_outputs(out: Any, ents: Sequence[dict], device: str) -> tuple[list, list, dict | None]:
    """A call's result against the layout's output entries: (tensors, plain values, error reply
    or None). The checks only make the worker's own candidate look worse (the judge compares
    the outputs itself)."""
    import torch

    got = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(got) != len(ents):
        return [], [], _reply_error("incorrect", f"returned {len(got)} output(s), the reference returns {len(ents)}")
    tensors, values = [], []
    for i, (g, e) in enumerate(zip(got, ents)):
        tag = f"output {i}" if len(ents) > 1 else "output"
        if e["kind"] == "value":
            try:
                values.append(_value(g.item() if isinstance(g, torch.Tensor) and g.numel() == 1 else g))
            except TypeError as err:
                return [], [], _reply_error("incorrect", f"{tag}: {err}")
            tensors.append(None)
            continue
        if not isinstance(g, torch.Tensor):
            return [], [], _reply_error("incorrect", f"{tag}: expected a tensor, got {type(g).__name__}")
        if type(g) is not torch.Tensor:
            return [], [], _reply_error("cheat_suspected", f"{tag} is a {type(g).__name__}, a tensor subclass "
                                                           "(lazy or deferred values)")
        if list(g.shape) != list(e["shape"]):
            return [], [], _reply_error("incorrect", f"{tag}: shape {tuple(g.shape)} != reference {tuple(e['shape'])}")
        if dtype_name(g) != e["dtype"]:
            return [], [], _reply_error("incorrect", f"{tag}: dtype {g.dtype} != reference torch.{e['dtype']}")
        if g.device.type != torch.device(device).type:
            return [], [], _reply_error("incorrect", f"{tag}: device {g.device} != reference {device}")
        if e["contiguous"] and not g.is_contiguous():
            return [], [], _reply_error("incorrect", f"{tag}: not contiguous (strides {g.stride()}) while the "
                                                     "reference's output is")
        values.append(None)
        tensors.append(g)
    return tensors, values, None


def open_setup(link: Link, msg: dict, open_arena: Callable) -> Any:
    """The worker's side of a "setup" message: the arena's descriptor when it travels by
    SCM_RIGHTS (asked for with "send-fds"), then the arena mapped (a flat uint8 tensor)."""
    info = msg["arena"]
    fds: list[int] = []
    if info.get("kind") == "host":
        link.send({"type": "send-fds"})
        fds = link.recv_fds(1)
    return open_arena(info, fds)


#: Most calls one gate crossing may ask for (session.py: a batch, one fresh input set per call).
MAX_BATCH = 32


def batch_slots(msg: dict, layouts: dict | None) -> list[str]:
    """The extra calls of a "call" message (`more`: slot names "<slot>.<i>" of the layout, one
    input set each, run after the first between the same two marks of the gate's clock);
    ValueError when they are not such names."""
    more = msg.get("more") or []
    if not more:
        return []
    base = msg.get("slot")
    if (not isinstance(more, list) or len(more) >= MAX_BATCH or layouts is None
            or any(not isinstance(n, str) or n.rsplit(".", 1)[0] != base or n not in layouts for n in more)
            or len(set(more)) != len(more)):
        raise ValueError("a batch of calls the layout does not hold")
    return list(more)


def answer_call(msg: dict, fn: Callable[..., Any], slot: dict, arena, sync, device: str,
                on_error: Callable[[BaseException], dict], share: Callable[[list], list] | None = None,
                keep: list | None = None, layouts: dict | None = None) -> dict:
    """Run one "call" of `fn` on the arena's inputs of `slot` (and, for a batch, on those of
    each slot `msg["more"]` names, in order: batch_slots), all between the gate's
    `sync.before()` and `sync.after()`; the reply ("enqueued", with ok False and a status and
    reason when a call failed; "more": the outputs and values of the extra calls). With the
    outputs in the arena (CPU) each result is copied there before `sync.after()`; otherwise
    (GPU) `share(tensors)` describes the memory each call wrote, after `sync.after()`, and
    `keep` holds the tensors until the next call."""
    import torch

    try:
        extra = batch_slots(msg, layouts)
    except ValueError as e:
        return {"type": "enqueued", "id": msg.get("id"), "values": [], **_reply_error("crashed", str(e))}
    slots = [slot] + [layouts[n] for n in extra]

    def inputs(s: dict) -> list:
        ins = views(arena, s["inputs"])
        ins = [v.view(v.shape) if isinstance(v, torch.Tensor) else v for v in ins]   # a fresh object per call
        for i, v in enumerate(msg.get("values") or []):
            if i < len(ins) and s["inputs"][i]["kind"] == "value":
                ins[i] = v
        return ins

    all_ins = [inputs(s) for s in slots]
    in_arena = all(e["kind"] != "tensor" or e["offset"] >= 0 for e in slot["outputs"])
    calls: list[tuple[list, list]] = []      # (tensors, values) per call
    err = None
    sync.before()
    try:
        with torch.no_grad():
            for s, ins in zip(slots, all_ins):
                tensors, values, err = check_outputs(fn(*ins), s["outputs"], device)
                if err is not None:
                    break
                if in_arena:
                    for dst, t in zip(views(arena, s["outputs"]), tensors):
                        if t is not None:
                            dst.copy_(t)
                calls.append((tensors, values))
    except Exception as e:  # noqa: BLE001 - a failing call ends the session with its status
        err = on_error(e)
    sync.after()
    first = calls[0] if calls else ([], [])
    reply = {"type": "enqueued", "id": msg.get("id"), "ok": err is None, "values": first[1],
             "self_ms": sync.self_ms()}
    if err is None and extra:
        reply["more"] = [{"values": v} for _, v in calls[1:]]
    if err is None and not in_arena and share is not None:
        try:
            described = [describe_outputs(t, arena, share) for t, _ in calls]
            reply["outputs"] = described[0]
            for m, d in zip(reply.get("more", []), described[1:]):
                m["outputs"] = d
        except Exception as e:  # noqa: BLE001 - memory that cannot be shared is not an output the judge can check
            err = _reply_error("incorrect", f"the output's memory cannot be shared with the judge: {e}")
        if keep is not None:
            keep[:] = [t for ts, _ in calls for t in ts]
    if err:
        reply.update(err)
        reply["ok"] = False
        reply.pop("more", None)
    return reply


def describe_outputs(tensors: list, arena, share: Callable[[list], list]) -> list:
    """Where each output is, for the judge: {"arena": offset} for one that lies in the arena
    the judge handed over (an output written into an input buffer: the judge reads it there,
    and its check of the inputs sees the change), else what `share` says (its own memory)."""
    lo = arena.data_ptr()
    hi = lo + arena.numel() * arena.element_size()
    out: list = [None] * len(tensors)
    rest = []
    for i, t in enumerate(tensors):
        if t is not None and t.numel() and lo <= t.data_ptr() < hi:
            out[i] = {"arena": t.data_ptr() - lo}
        else:
            rest.append(i)
    for i, d in zip(rest, share([tensors[i] for i in rest])):
        out[i] = d
    return out


class WorkerState:
    """What a worker keeps of its link between sessions: the mapped arena (a CUDA IPC handle
    may be opened once per process), its layout, the gate's sync objects, how it shares its
    outputs (GPU) and the last call's outputs (kept alive until the next call)."""

    def __init__(self, open_arena: Callable, make_sync: Callable[[dict], Any],
                 share: Callable[[list], list] | None = None):
        self.open_arena, self.make_sync, self.share = open_arena, make_sync, share
        self.arena = self.sync = None
        self.layout: dict = {}
        self.kept: list = []


def serve(link: Link, slots: dict[str, Callable[..., Any]], device: str, state: WorkerState,
          on_error: Callable[[BaseException, str], dict]) -> str:
    """A candidate worker's side of one gate session: "setup" (map a new arena, reply
    "setup-ok") or "resume" (a later session on the same arena), then "call"s until "end",
    which the timer sends at the end of every session. `slots[name](*inputs)` runs one call;
    `on_error(exc, slot)` turns its exception into an error reply. Returns "end", or the
    status of the first error this side replied (the timer reports it)."""
    status = "end"
    while True:
        msg = link.recv(None)
        kind = msg.get("type")
        if kind == "end":
            return status
        if kind in ("setup", "resume"):
            try:
                if kind == "setup":       # a new arena (a first session, or a restarted timer's)
                    state.arena = open_setup(link, msg, state.open_arena)
                    state.layout = msg["layout"]
                    state.sync = state.make_sync(msg.get("clock", {}))
                if state.arena is None:
                    raise RuntimeError("asked to resume before any setup")
                link.send({"type": "setup-ok"})
            except Exception as e:  # noqa: BLE001 - reported to the timer, which ends the session
                link.send({"type": "setup-failed", "error": f"{type(e).__name__}: {e}"[:2000]})
                status = "crashed"
            continue
        if kind != "call" or state.arena is None or msg.get("slot") not in slots:
            link.send({"type": "out-of-turn", "got": str(kind)[:40]})
            status = "crashed"
            continue
        name = msg["slot"]
        reply = answer_call(msg, slots[name], state.layout["slots"][name], state.arena, state.sync, device,
                            lambda e, n=name: on_error(e, n), state.share, state.kept, state.layout["slots"])
        link.send(reply)
        if not reply["ok"] and status == "end":
            status = reply["status"]


