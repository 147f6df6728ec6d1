"""The judge's session (session.py) against workers served in threads of this process: the
same gate, links and arenas as between processes, so the session's rules are tested fast.

Outputs travel both ways the gate knows: copied into the arena (the CPU gate) and shared by
the worker where its call wrote them (the GPU gate's shape, with a stand-in for CUDA IPC)."""
from __future__ import annotations

import socket
import statistics
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
                                       shared.share if shared is not None else None, kept, layout["slots"]))


def _judge(candidate, by_reference: bool = False, second: bool = True, time_it: bool = True, contract=None,
           **session_kw):
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
        ex = {n: (prob.fresh(n.split(".")[0]), outs[n.split(".")[0]]) for n in prob.cand_layout["slots"]}
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
                             contract=contract, **session_kw).run(time_it)
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
    ph = dict(r["phases_s"])
    gate = ph.pop("gate")
    assert set(ph) <= {"trials", "warm_up", "alone", "rounds"} and {"trials", "warm_up", "rounds"} <= set(ph)
    assert all(v >= 0 for v in ph.values()) and ph["rounds"] > 0
    # The gate's parts: every call arms the clock and waits for the reply; the rounds draw inputs.
    assert {"arm", "reply", "device", "inputs", "compare"} <= set(gate) and all(v >= 0 for v in gate.values())
    assert sum(gate.values()) <= sum(ph.values()) + 0.05


@pytest.mark.parametrize("by_reference", [False, True], ids=["copied", "shared"])
def test_wrong_answers_once_timing_begins_are_caught(by_reference):
    calls = [0]

    def late(x):
        calls[0] += 1
        return _softmax(x) if calls[0] <= 4 else torch.zeros_like(x)
    r = _judge(late, by_reference)
    assert r["status"] == "cheat_suspected" and "timed run" in r["reason"], r


def test_a_timed_answer_just_outside_the_tolerance_is_called_again_on_the_same_inputs():
    """Just outside the tolerance on a timed call (less than session.MARGINAL times): the same
    inputs are called once more, alone. The same miss again: incorrect (an honest kernel whose
    rounding misses on some inputs); within the tolerance then: less accurate while timed."""
    calls = [0]

    def drifts(x):       # from the fifth call on (after the trials), off by about twice the tolerance
        calls[0] += 1
        return _softmax(x) + (3.5e-4 if calls[0] > 4 else 0.0)
    r = _judge(drifts)
    assert r["status"] == "incorrect" and "called once more on the same inputs" in r["reason"], r["reason"]
    assert "times the tolerance" in r["reason"]

    calls[0] = 0

    def while_timed(x):  # off on the fifth call only (the first timed one), right on the next
        calls[0] += 1
        return _softmax(x) + (3.5e-4 if calls[0] == 5 else 0.0)
    r = _judge(while_timed)
    assert r["status"] == "cheat_suspected" and "less accurate while it is timed" in r["reason"], r["reason"]

    calls[0] = 0

    def far_off(x):      # ten times the tolerance: no second call, a cheat
        calls[0] += 1
        return _softmax(x) + (3e-3 if calls[0] > 4 else 0.0)
    r = _judge(far_off)
    assert r["status"] == "cheat_suspected" and "computes something else while it is timed" in r["reason"], r["reason"]


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


@pytest.mark.parametrize("by_reference", [False, True], ids=["copied", "shared"])
def test_short_calls_are_timed_in_batches_of_fresh_inputs(by_reference, monkeypatch):
    """A call much shorter than the gate's own cost is timed as a batch of calls between two
    marks of the clock, each on its own fresh inputs, and the verdict's times are per call."""
    monkeypatch.setattr(session, "BATCH_TARGET", 1e9)      # every batch as long as the arena allows
    monkeypatch.setitem(session.BATCH_BYTES, "cpu", 64 * 2**20)   # batches on the CPU too (off by default)
    seen: list[torch.Tensor] = []

    def remembering(x):
        seen.append(x.clone())
        return _softmax(x)

    r = _judge(remembering, by_reference)
    assert r["status"] == "ok", r["reason"]
    k = r["batch"]
    assert 1 < k <= gate.MAX_BATCH
    # The timed rounds' calls: the samples' rounds times k, plus the warm-up's; no two alike.
    assert len(seen) >= len(r["samples"]["candidate"]) * k
    assert len({hash(t.numpy().tobytes()) for t in seen}) == len(seen)
    from workbench.execution.verdict import judge

    v = judge({"status": "ok"}, r, "cpu", None)
    assert v["status"] == "ok" and v["batch"] == k
    null, gate_cand = statistics.median(r["samples"]["null"]), statistics.median(r["samples"]["candidate"])
    # Net of the null call, per call; on a loaded CPU a net median can come out not positive,
    # and then the verdict says so and reports gate-to-gate times per call.
    if "gate-to-gate" in v["reason"]:
        null = 0.0
    assert v["candidate"]["median_ms"] == pytest.approx((gate_cand - null) / k, rel=1e-6)


def test_a_candidate_that_skips_work_inside_a_batch_is_caught(monkeypatch):
    """Calls that follow each other at once (a batch) hand back the previous answer: the
    judge compares every call of a checked batch with the reference on the same inputs."""
    monkeypatch.setattr(session, "BATCH_TARGET", 1e9)
    monkeypatch.setitem(session.BATCH_BYTES, "cpu", 64 * 2**20)
    last: dict = {}

    def lazy(x):
        now = time.perf_counter()
        if "out" in last and now - last["t"] < 2e-4:
            out = last["out"]
        else:
            out = _softmax(x)
        last.update(out=out, t=time.perf_counter())
        return out

    r = _judge(lazy)
    assert r["status"] == "cheat_suspected" and "timed run's output differs" in r["reason"], r


def test_a_batch_names_only_slots_of_the_layout():
    layouts = {"full": {}, "full.1": {}, "full.2": {}, "second": {}}
    assert gate.batch_slots({"slot": "full", "more": ["full.1", "full.2"]}, layouts) == ["full.1", "full.2"]
    assert gate.batch_slots({"slot": "full"}, layouts) == []
    for bad in (["second"], ["full.3"], ["full.1", "full.1"], "full.1", [1], ["full.1"] * gate.MAX_BATCH):
        with pytest.raises(ValueError):
            gate.batch_slots({"slot": "full", "more": bad}, layouts)
    reply = gate.answer_call({"type": "call", "id": 3, "slot": "full", "more": ["nope"]}, lambda x: x,
                             {"inputs": [], "outputs": []}, torch.zeros(8, dtype=torch.uint8), gate.HostSync(), "cpu",
                             lambda e: {}, None, None, layouts)
    assert reply["ok"] is False and reply["status"] == "crashed" and reply["id"] == 3


def test_the_cpu_gate_times_one_call_per_crossing_by_default():
    r = _judge(_softmax)
    assert r["status"] == "ok" and r["batch"] == 1


def test_the_batch_covers_the_gate_cost_within_the_arena():
    def warm(ref, cand, null=1.0):
        return {"reference": [ref] * 3, "candidate": [cand] * 3, "null": [null] * 3}

    assert session.choose_batch(warm(1.2, 1.3), 32) == 32          # calls as short as the gate: all it holds
    assert session.choose_batch(warm(3.0, 5.0), 32) == 4            # 10 x the gate / 2 ms -> 5 -> a power of two
    assert session.choose_batch(warm(100.0, 90.0), 32) == 1
    assert session.choose_batch(warm(0.5, 0.5), 7) == 4
    # A slow side keeps the batch under BATCH_MAX_MS.
    assert session.choose_batch(warm(1.1, 1.0 + session.BATCH_MAX_MS / 2), 32) == 2
    assert session.choose_batch(warm(1.1, 1.0 + 2 * session.BATCH_MAX_MS), 32) == 1
    assert session.choose_batch({"reference": [], "candidate": [], "null": []}, 7) == 1


def test_max_runs_counts_calls_so_a_batched_round_counts_its_batch():
    from types import SimpleNamespace

    rounds = lambda batch, **o: session.Session.max_rounds(SimpleNamespace(opts=o, batch=batch))  # noqa: E731
    assert rounds(1, max_runs=200, min_runs=5) == 200
    assert rounds(8, max_runs=200, min_runs=5) == 25
    assert rounds(16, max_runs=200, min_runs=5) == 13     # 208 calls of each side: never fewer than max_runs
    assert rounds(32, max_runs=100, min_runs=5) == 5      # never under min_runs


def test_the_reference_is_timed_alone_only_on_a_quiet_gpu():
    """Before the reference is timed alone the judge waits for an idle GPU (`quiet`): work a
    candidate left queued would slow the "alone" times the verdict compares with. A GPU that
    stays busy with the candidate stopped is the candidate's doing."""
    calls = []

    def idle():
        calls.append(1)
        return None

    r = _judge(_softmax, quiet=idle)
    assert r["status"] == "ok", r["reason"]
    assert len(calls) == 1 and r["alone"]["reference"]
    r = _judge(_softmax, quiet=lambda: 3.2)
    assert r["status"] == "cheat_suspected" and "stayed busy (3.2x" in r["reason"] and "left running" in r["reason"]
    assert "samples" not in r
