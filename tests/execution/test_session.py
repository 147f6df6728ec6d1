"""The judge's session (session.py) against workers served in threads of this process: the
same gate, links and arenas as between processes, so the session's rules are tested fast.

Outputs travel both ways the gate knows: copied into the arena (the CPU gate) and shared by
the worker where its call wrote them (the GPU gate's shape, with a stand-in for CUDA IPC)."""
from __future__ import annotations

import socket
import threading
import time

import pytest
import torch

from workbench.execution import gate, session
from workbench.problems import get_problem, load_source

OPTS = {"warmup": 1, "min_runs": 4, "max_runs": 6, "max_total_ms": 1e9}


class _Shared:
    """A stand-in for CUDA IPC within one process: a worker names its outputs by a key, the
    timer looks them up (gate_cuda.share_outputs / Imports)."""

    def __init__(self):
        self.table: dict[str, torch.Tensor] = {}

    def share(self, tensors):
        out = []
        for t in tensors:
            key = f"{id(t)}-{t.data_ptr()}"
            self.table[key] = t
            out.append({"handle": key})
        return out

    def tensor(self, shared, entry):
        return self.table[shared["handle"]]

    def close(self):
        self.table.clear()


def _softmax(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def _worker(sock, slots, shared: _Shared | None):
    state = gate.WorkerState(gate.open_host_arena, lambda info: gate.HostSync(),
                             shared.share if shared is not None else None)

    def on_error(e, slot):
        return {"ok": False, "status": "runtime_error", "reason": f"{type(e).__name__}: {e}"}

    link = gate.Link(sock)
    try:
        gate.serve(link, slots, "cpu", state, on_error)
    except gate.LinkClosed:
        pass


def _ref_worker(sock, models, shared: _Shared | None):
    """A minimal clean worker: setup per key, calls, like worker.reference_main."""
    link, arenas, kept = gate.Link(sock), {}, []
    while True:
        try:
            msg = link.recv(None)
        except gate.LinkClosed:
            return
        if msg["type"] == "setup":
            arenas[msg["key"]] = (gate.open_setup(link, msg, gate.open_host_arena), msg["layout"])
            link.send({"type": "setup-ok"})
        elif msg["type"] == "call":
            base, layout = arenas[msg["key"]]
            link.send(gate.answer_call(msg, models[msg["slot"]], layout["slots"][msg["slot"]], base, gate.HostSync(),
                                       "cpu", lambda e: {"ok": False, "status": "runtime_error", "reason": str(e)},
                                       shared.share if shared is not None else None, kept))


def _judge(candidate, by_reference: bool = False, second: bool = True, time_it: bool = True, contract=None):
    """The session's report for `candidate` (a function of x) judged against softmax, under
    `contract` (None: the default)."""
    p = get_problem("L1/01_softmax")
    shapes = {"full": load_source(p.source, name=p.id, cpu=True)}
    if second:
        shapes["second"] = load_source(p.source, name=p.id, sizes={"M": 20, "N": 70}, cpu=True)
    outs = {k: gate.entries([torch.empty(lp.sizes["M"], lp.sizes["N"])], 0)[0] for k, lp in shapes.items()}
    shared = _Shared() if by_reference else None
    prob = session.Problem("k", shapes, outs, {k: 200 for k in shapes}, False, "cpu")
    if by_reference:      # the GPU gate's layouts: outputs named by the worker, not in the arena
        ex = {n: (prob.fresh(n), outs[n]) for n in shapes}
        prob.cand_layout = gate.make_layout(ex, outputs_in_arena=False)
        prob.ref_layout = gate.make_layout({**ex, "null": ([], [])}, outputs_in_arena=False)
    (ca, cb), (ra, rb) = socket.socketpair(), socket.socketpair()
    slots = {"full": candidate, "second": candidate}
    ref_models = {"full": lambda x: torch.softmax(x, dim=-1), "second": lambda x: torch.softmax(x, dim=-1),
                  "null": (lambda *_: []) if by_reference else (lambda *_: [torch.zeros(48, 200)])}
    threads = [threading.Thread(target=_worker, args=(cb, slots, shared), daemon=True),
               threading.Thread(target=_ref_worker, args=(rb, ref_models, shared), daemon=True)]
    for t in threads:
        t.start()
    cand = session.Endpoint(gate.Link(ca), gate.HostClock(), gate.HostArena, None, imports=shared)
    ref = session.Endpoint(gate.Link(ra), gate.HostClock(), gate.HostArena, None, who="reference", imports=shared)
    deadline = time.monotonic() + 60
    ref.setup("k", prob.ref_layout, deadline)
    cand.setup("k", prob.cand_layout, deadline)
    report = session.Session(prob, cand, ref, [0, 1], OPTS, deadline, check_share=1.0, timing_s=60,
                             contract=contract).run(time_it)
    cand.link.send({"type": "end"})
    cand.close()
    ref.close()
    return report


@pytest.mark.parametrize("by_reference", [False, True], ids=["copied", "shared"])
def test_an_honest_candidate_is_timed_and_every_call_checked(by_reference):
    r = _judge(_softmax, by_reference)
    assert r["status"] == "ok", r["reason"]
    s = r["samples"]
    assert len(s["reference"]) == len(s["candidate"]) == len(s["null"]) >= 4
    assert r["trials"] == 4 and r["checked"] >= 4 + len(s["candidate"])
    assert set(r["alone"]) == {"reference", "null"}


@pytest.mark.parametrize("by_reference", [False, True], ids=["copied", "shared"])
def test_wrong_answers_once_timing_begins_are_caught(by_reference):
    calls = [0]

    def late(x):
        calls[0] += 1
        return _softmax(x) if calls[0] <= 4 else torch.zeros_like(x)
    r = _judge(late, by_reference)
    assert r["status"] == "cheat_suspected" and "timed run" in r["reason"], r


def test_a_cache_returning_the_first_answer_is_named():
    memo = {}

    def cached(x):
        return memo.setdefault(tuple(x.shape), _softmax(x))
    r = _judge(cached)
    assert r["status"] == "cheat_suspected" and "previous call's result" in r["reason"], r["reason"]


def test_inputs_changed_in_place_are_named():
    def in_place(x):
        return x.sub_(x.amax(dim=-1, keepdim=True)).exp_().div_(x.sum(dim=-1, keepdim=True))
    r = _judge(in_place)
    assert r["status"] == "cheat_suspected" and "modified its inputs in place" in r["reason"], r["reason"]


def test_the_second_shape_is_checked():
    def one_shape(x):
        return _softmax(x) if x.shape[0] == 48 else torch.zeros_like(x)
    r = _judge(one_shape, time_it=False)
    assert r["status"] in ("incorrect", "cheat_suspected") and "second shape" in r["reason"], r["reason"]


def test_the_runs_contract_sets_the_tolerance_and_the_trials():
    """Outputs off by 1e-3: incorrect at the project's fp32 tolerance, ok at the legacy 1e-2;
    the contract's trials are the session's (each, the nudged call and the second shape checked)."""
    from workbench.problems.contract import Contract

    def off(x):
        return _softmax(x) + 1e-3
    strict = _judge(off, time_it=False)
    assert strict["status"] == "incorrect" and "out of tolerance" in strict["reason"], strict["reason"]
    loose = _judge(off, time_it=False, contract=Contract("fp32", "legacy", trials=3))
    assert loose["status"] == "ok", loose["reason"]
    assert loose["trials"] == 3 + 1 + 1


def test_a_failing_call_ends_the_session_with_its_status():
    def boom(x):
        raise ValueError("no kernel today")
    r = _judge(boom)
    assert r["status"] == "runtime_error" and "no kernel today" in r["reason"]


def test_outputs_the_worker_does_not_name_are_a_crash():
    p = get_problem("L1/01_softmax")
    lp = load_source(p.source, name=p.id, cpu=True)
    outs = gate.entries([torch.empty(48, 200)], 0)[0]
    prob = session.Problem("k", {"full": lp}, {"full": outs}, {"full": 200}, False, "cpu")
    ep = session.Endpoint(None, gate.HostClock(), gate.HostArena, None, imports=_Shared())
    ep.arenas["k"] = (None, gate.make_layout({"full": (prob.fresh("full"), outs)}, outputs_in_arena=False))
    with pytest.raises(session.Finding, match="did not say where its outputs are"):
        ep._outputs({"outputs": []}, "k", "full", [])
    with pytest.raises(session.Finding, match="cannot map"):
        ep.imports = type("Bad", (), {"tensor": lambda self, sh, e: (_ for _ in ()).throw(ValueError("no such"))})()
        ep._outputs({"outputs": [{"handle": "x"}]}, "k", "full", [])
