"""The parts of the hardened executor, one property each: frames, the reference-time check,
the judge's comparisons and verdict, the gate's arenas and freezer, the worker's
environment, capabilities and the processes it cannot read, the scrubber."""
from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import threading
import time

import pytest
import torch

from workbench.execution import contain, gate, protocol, reference, session, tensorfile
from workbench.execution.scrub import REDACTED, scrub
from workbench.execution.verdict import judge

LINUX = sys.platform.startswith("linux")


def test_frames_round_trip_and_split_reads():
    r, w = os.pipe()
    protocol.send(w, {"type": "ready"})
    protocol.send(w, {"type": "result", "job_id": "ab", "result": {"x": [1, 2]}})
    reader = protocol.FrameReader(r)
    got = []
    while len(got) < 2:
        got += reader.poll(1.0)
    assert got == [{"type": "ready"}, {"type": "result", "job_id": "ab", "result": {"x": [1, 2]}}]
    os.close(w)
    assert reader.poll(0.5) == [] and reader.eof
    os.close(r)


@pytest.mark.parametrize("payload,what", [(struct.pack(">I", 2**31) + b"x", "over"), (struct.pack(">I", 3) + b"abc", "JSON"),
                                          (struct.pack(">I", 2) + b"[]", "not a JSON object")])
def test_malformed_frames_are_refused(payload, what):
    r, w = os.pipe()
    os.write(w, payload)
    with pytest.raises(protocol.ProtocolError, match=what):
        protocol.FrameReader(r).poll(1.0)
    os.close(r)
    os.close(w)


def _clean(med: float, half: float = 0.0) -> dict:
    return {"median_ms": med, "ci_low_ms": med - half, "ci_high_ms": med + half}


def test_reference_check_flags_a_slowed_reference_on_gpu():
    # Alone 1.00 ms; beside the candidate 1.30 ms with a tight spread: slowed.
    assert "slowed the reference" in reference.reference_finding([1.3] * 9, _clean(1.0, 0.005), "cuda")
    # Within 15%: the same reference timed twice.
    assert reference.reference_finding([1.1] * 9, _clean(1.0, 0.005), "cuda") is None
    # Faster beside the candidate is no advantage to it: never flagged.
    assert reference.reference_finding([0.5] * 9, _clean(1.0), "cuda") is None
    # A noisy clean timing widens the allowance (three times the relative CI half-widths).
    assert reference.reference_finding([1.3] * 9, _clean(1.0, 0.2), "cuda") is None


def test_reference_slowdown_states_the_times_and_the_finding_adds_the_blame():
    slowed = reference.reference_slowdown([1.3] * 9, _clean(1.0, 0.005), "cuda")
    assert slowed.startswith("the reference took 1.3000 ms beside the candidate but 1.0000 ms") and "1.30x" in slowed
    assert "candidate slowed" not in slowed
    assert reference.reference_finding([1.3] * 9, _clean(1.0, 0.005), "cuda") == (
        slowed + ": the candidate slowed the reference down")
    assert reference.reference_slowdown([1.1] * 9, _clean(1.0, 0.005), "cuda") is None


def test_reference_check_on_cpu_needs_every_sample_grossly_slow():
    assert reference.reference_finding([20.5, 21.0, 20.2], _clean(0.02), "cpu") is not None
    # One fast sample among slow ones (a busy machine), or a few ms: not flagged.
    assert reference.reference_finding([0.03, 21.0, 20.2], _clean(0.02), "cpu") is None
    assert reference.reference_finding([4.0, 5.0, 6.0], _clean(0.02), "cpu") is None


# --------------------------------------------------------------------------- the judge's comparisons
def test_judge_compares_whole_small_outputs_and_names_the_values():
    ref = torch.randn(40, 30)
    assert session.compare([ref + 1e-7], [ref], [None], [None], 1, False) == (True, "")
    bad = ref.clone()
    bad[17, 3] += 1.0
    ok, why = session.compare([bad], [ref], [None], [None], 1, False)
    assert not ok and "1 of 1200 values" in why
    ok, why = session.compare([None], [None], [3], [4], 1, False)
    assert not ok and "3 != reference 4" in why


def test_judge_samples_large_outputs_at_positions_it_draws(monkeypatch):
    monkeypatch.setattr(session, "FULL_COMPARE_MAX", 1000)
    monkeypatch.setattr(session, "SAMPLE", 500)
    ref = torch.randn(100, 100)
    half = ref.clone()
    half.view(-1)[::2] = 0.0     # half of the elements wrong: any sample of 500 sees some
    ok, why = session.compare([half], [ref], [None], [None], 1, False)
    assert not ok and "sampled positions" in why


def test_nudged_inputs_differ_in_one_element_of_each_float_tensor():
    x, idx = torch.randn(4, 5), torch.arange(3)
    y, j = session.nudged([x, idx])
    assert (y != x).sum() == 1 and torch.equal(j, idx) and y is not x


def test_nudged_inputs_take_their_tail_from_another_set():
    x, other = torch.randn(64, 128), torch.randn(64, 128)
    (y,) = session.nudged([x], [other])
    n = int(x.numel() * session.NUDGE_SHARE)
    assert torch.equal(y.view(-1)[:-n], x.view(-1)[:-n])
    assert torch.equal(y.view(-1)[-n:-1], other.view(-1)[-n:-1]) and y.view(-1)[-1] == other.view(-1)[-1] + 1.5


def test_a_cache_under_a_first_row_fingerprint_is_stale_on_nudged_inputs_beyond_tolerance():
    """A softmax kept under the sum of the first row's first elements (the cheat fixture
    implausible_speedup): one changed element stays within the tolerance; the nudge does not."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(512, 4096, generator=g)
    x.view(-1)[-1] = 0.0    # a typical element: a large one changed by 1.5 moves its row past the tolerance alone
    ref = torch.softmax(x, -1)
    one = torch.softmax(session.nudged([x])[0], -1)
    ok_one, _ = session.compare([ref], [one], [None], [None], 4096, False)
    tail = torch.softmax(session.nudged([x], [torch.randn(512, 4096, generator=g)])[0], -1)
    ok_tail, why = session.compare([ref], [tail], [None], [None], 4096, False)
    assert ok_one and not ok_tail, why


# --------------------------------------------------------------------------- the verdict
def _report(ref, cand, null, alone=None, **kw):
    n = len(ref)
    return {"status": "ok", "reason": "", "samples": {"reference": ref, "candidate": cand, "null": null},
            "alone": {"reference": alone or ref, "null": null}, "checked": n, **kw}


OK = {"status": "ok", "reason": "", "compile_s": 1.0}


def test_judge_takes_times_from_the_report_less_the_gates_own_cost():
    v = judge(OK, _report([1.1] * 9, [0.6] * 9, [0.1] * 9), "cuda", None)
    assert v["status"] == "ok"
    assert v["reference"]["median_ms"] == pytest.approx(1.0) and v["candidate"]["median_ms"] == pytest.approx(0.5)
    assert v["speedup"] == pytest.approx(2.0) and v["gate_ms"]["null"] == pytest.approx(0.1)
    # A call as short as an empty one: gate-to-gate times, said so.
    v = judge(OK, _report([0.5] * 9, [0.4] * 9, [0.45] * 9), "cuda", None)
    assert v["status"] == "ok" and v["speedup"] == pytest.approx(0.5 / 0.4) and "gate-to-gate" in v["reason"]


def test_judge_keeps_failures_from_either_side_and_needs_a_report():
    assert judge({"status": "incorrect", "reason": "x"}, None, "cuda", None)["status"] == "incorrect"
    assert judge({"status": "great"}, None, "cuda", None)["status"] == "crashed"
    assert "without a session" in judge(OK, None, "cuda", None)["reason"]
    v = judge(OK, {"status": "cheat_suspected", "reason": "timed run differs"}, "cuda", None)
    assert v == {"status": "cheat_suspected", "reason": "timed run differs", "compile_s": 1.0}
    # A worker that says less than ok is believed; one that says ok is not enough.
    assert judge({"status": "runtime_error", "reason": "boom"}, _report([1.0] * 5, [0.5] * 5, [0.1] * 5), "cuda",
                 None)["status"] == "runtime_error"
    assert judge(OK, {"status": "ok", "samples": {"reference": [1.0], "candidate": [float("nan")], "null": [0.1]}},
                 "cuda", None)["status"] == "crashed"


def test_judge_flags_a_slowed_reference_after_a_second_look():
    slowed = _report([3.0] * 9, [0.5] * 9, [0.1] * 9, alone=[1.0] * 9, retime={"reference": [1.02] * 9},
                     busy_ratio=1.0)
    v = judge(OK, slowed, "cuda", None)
    assert v["status"] == "cheat_suspected" and "timed alone twice" in v["reason"]
    # The machine got slower meanwhile: the reference is slow alone too.
    busier = _report([1.4] * 9, [0.5] * 9, [0.1] * 9, alone=[1.0] * 9, retime={"reference": [1.35] * 9},
                     busy_ratio=1.0)
    assert judge(OK, busier, "cuda", None)["status"] == "ok"
    # With the candidate stopped the GPU stays busy: its work was left running.
    busy = _report([3.0] * 9, [0.5] * 9, [0.1] * 9, alone=[1.0] * 9, retime={"reference": [3.0] * 9},
                   busy_ratio=4.0)
    v = judge(OK, busy, "cuda", None)
    assert v["status"] == "cheat_suspected" and "left running" in v["reason"]


def test_judge_takes_a_mildly_slowed_reference_alone_on_a_gpu():
    """A heavy honest kernel lowers the GPU's clocks for the reference after it: a slowdown of
    at most SLOWED_MAX, confirmed alone twice with the GPU idle, is not called cheating, and
    the speedup is taken against the faster reference timed alone (the slowdown cannot raise it)."""
    from workbench.execution.verdict import SLOWED_MAX

    mild = _report([1.3] * 9, [0.5] * 9, [0.1] * 9, alone=[1.0] * 9,
                   retime={"reference": [1.04] * 9, "null": [0.1] * 9}, busy_ratio=1.0,
                   sm_mhz={"beside": 1500.0, "alone": 1980.0})
    v = judge(OK, mild, "cuda", None)
    assert v["status"] == "ok", v["reason"]
    assert v["speedup"] == pytest.approx((1.0 - 0.1) / (0.5 - 0.1))     # not (1.3 - 0.1) / 0.4
    assert "timed alone" in v["reason"] and "1500 MHz beside" in v["reason"]
    assert "candidate slowed" not in v["reason"]       # an ok verdict blames no one
    # A slowdown past SLOWED_MAX stays flagged.
    far = _report([1.0 * SLOWED_MAX + 0.2] * 9, [0.5] * 9, [0.1] * 9, alone=[1.0] * 9,
                  retime={"reference": [1.0] * 9, "null": [0.1] * 9}, busy_ratio=1.0)
    v = judge(OK, far, "cuda", None)
    assert v["status"] == "cheat_suspected" and "slowed the reference" in v["reason"]
    # Not confirmed by a second look alone: no retime, it stays flagged.
    once = _report([1.3] * 9, [0.5] * 9, [0.1] * 9, alone=[1.0] * 9, busy_ratio=1.0)
    assert judge(OK, once, "cuda", None)["status"] == "cheat_suspected"


def test_judge_applies_the_roofline_floor_to_the_net_time():
    v = judge(OK, _report([1.1] * 9, [0.6] * 9, [0.1] * 9), "cuda", 10.0)
    assert v["status"] == "cheat_suspected" and "roofline" in v["reason"]
    # A call that does no work: its gate times are the null call's, far under any floor.
    v = judge(OK, _report([1.1] * 9, [0.1, 0.12, 0.1, 0.11, 0.1, 0.1, 0.13, 0.1, 0.1], [0.1] * 9), "cuda", 0.2)
    assert v["status"] == "cheat_suspected" and "roofline" in v["reason"]


def test_the_roofline_floor_takes_the_gates_cost_at_its_smallest():
    # Null calls slowed by the host (a loaded machine) push the median net time of an honest
    # kernel near the roofline under the floor; the floor check takes the smallest null.
    nulls = [0.1, 0.35, 0.4, 0.38, 0.36, 0.42, 0.1, 0.37, 0.39]
    v = judge(OK, _report([1.5] * 9, [0.6] * 9, nulls), "cuda", 0.4)
    assert v["status"] == "ok", v["reason"]
    assert v["candidate"]["median_ms"] == pytest.approx(0.6 - 0.37)   # the speedup keeps the median null
    # Before: 0.23 ms against a floor of 0.4 (under 0.8 of it). A floor the candidate cannot reach
    # even with the smallest null (0.5 ms) still flags it.
    v = judge(OK, _report([1.5] * 9, [0.6] * 9, nulls), "cuda", 0.7)
    assert v["status"] == "cheat_suspected" and "roofline" in v["reason"]


# --------------------------------------------------------------------------- the gate
def test_layout_places_buffers_aligned_and_views_share_the_arena():
    layout = gate.make_layout({"full": ([torch.randn(3, 5), 7], [torch.zeros(3, 5, dtype=torch.bfloat16)])})
    ins, outs = layout["slots"]["full"]["inputs"], layout["slots"]["full"]["outputs"]
    assert ins[0]["offset"] == 0 and outs[0]["offset"] % gate.ALIGN == 0 and ins[1] == {"kind": "value", "value": 7}
    arena = gate.HostArena(layout["nbytes"])
    x, v = gate.views(arena.base, ins)
    x.copy_(torch.ones(3, 5))
    assert v == 7 and float(arena.base[:60].view(torch.float32).sum()) == 15.0
    (o,) = gate.views(arena.base, outs)
    gate.poison([o])
    assert torch.isnan(o.float()).all()
    # Outputs shared by the worker (the GPU gate) take no room in the arena.
    nolay = gate.make_layout({"full": ([torch.randn(3, 5)], [torch.zeros(3, 5)])}, outputs_in_arena=False)
    assert nolay["slots"]["full"]["outputs"][0]["offset"] == -1 and nolay["nbytes"] < layout["nbytes"]
    arena.close()


def test_an_output_written_into_the_arena_is_read_there_and_its_input_seen_changed():
    """A candidate that writes its answer into its input buffer (GPU gate: outputs are the
    worker's own memory) is described by its arena offset; the judge reads it there and its
    check of the inputs sees the write (cheat_suspected), instead of failing to share it."""
    x = torch.randn(4, 8)
    layout = gate.make_layout({"full": ([x], [torch.zeros(4, 8)])}, outputs_in_arena=False)
    arena = gate.HostArena(layout["nbytes"])
    (xin,) = gate.views(arena.base, layout["slots"]["full"]["inputs"])
    xin.copy_(x)
    own = torch.zeros(4, 8)
    shared_own = []

    def share(ts):
        shared_own.extend(ts)
        return [{"handle": "own"} for _ in ts]

    in_place = xin.softmax(-1)
    xin.copy_(in_place)
    desc = gate.describe_outputs([xin, own], arena.base, share)
    assert desc == [{"arena": 0}, {"handle": "own"}] and shared_own[0] is own
    end = session.Endpoint(gate.Link.__new__(gate.Link), clock=None, new_arena=None, imports=object())
    end.arenas["k"] = (arena, layout)
    got = end._in_arena("k", desc[0], layout["slots"]["full"]["outputs"][0])
    assert torch.equal(got, in_place)
    assert gate.changed(gate.views(arena.base, layout["slots"]["full"]["inputs"]), [x])
    with pytest.raises(ValueError, match="does not fit"):
        end._in_arena("k", {"arena": layout["nbytes"] - 4}, layout["slots"]["full"]["outputs"][0])
    arena.close()


def test_the_arena_reaches_a_worker_only_by_its_descriptor():
    a, b = __import__("socket").socketpair()
    timer, worker = gate.Link(a), gate.Link(b)
    arena = gate.HostArena(4096)
    info, fds = arena.export()

    def serve():
        msg = worker.recv(5)
        base = gate.open_setup(worker, msg, gate.open_host_arena)
        base[:4] = torch.tensor([1, 2, 3, 4], dtype=torch.uint8)
        worker.send({"type": "setup-ok"})

    t = threading.Thread(target=serve)
    t.start()
    timer.send({"type": "setup", "arena": info})
    assert timer.recv(5) == {"type": "send-fds"}
    timer.send_fds(fds)
    assert timer.recv(5) == {"type": "setup-ok"}
    t.join(5)
    assert arena.base[:4].tolist() == [1, 2, 3, 4]
    assert info == {"kind": "host", "nbytes": 4096}      # no name anyone else could open
    arena.close()


def test_a_worker_reply_is_checked_before_its_outputs_are_copied():
    ents = gate.make_layout({"s": ([], [torch.zeros(2, 3)])})["slots"]["s"]["outputs"]
    assert gate.check_outputs(torch.zeros(2, 2), ents, "cpu")[2]["status"] == "incorrect"
    assert gate.check_outputs(torch.zeros(2, 3), ents, "cpu")[2] is None
    sub = torch.zeros(2, 3).as_subclass(type("Lazy", (torch.Tensor,), {}))
    assert gate.check_outputs(sub, ents, "cpu")[2]["status"] == "cheat_suspected"
    assert gate.check_outputs(torch.zeros(3, 2).t(), ents, "cpu")[2]["status"] == "incorrect"   # not contiguous


@pytest.mark.skipif(not LINUX, reason="stops processes found through /proc")
def test_the_freezer_stops_a_whole_tree_and_lets_it_go_on():
    # The root stands for a worker's supervisor: a process with a child that has a child of its
    # own. (Never this test process: its tree holds the session's other processes, such as the
    # LLM server of tests/conftest.py.)
    p = subprocess.Popen([sys.executable, "-c", "import os, time\nif os.fork() == 0:\n    os.fork()\n"
                          "time.sleep(30)\n"])
    fr = gate.Freezer(p.pid)
    try:
        end = time.monotonic() + 10
        while len(fr._tree()) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        kids = fr._tree()
        assert len(kids) >= 2 and p.pid not in kids
        fr.freeze()
        assert set(kids) <= set(fr.stopped) and all(gate._state(k) in ("T", "t") for k in kids)
        assert gate._state(p.pid) not in ("T", "t")   # the root itself is not stopped
        fr.thaw()
        time.sleep(0.05)
        assert all(gate._state(k) not in ("T", "t") for k in kids)
    finally:
        for k in gate.Freezer(p.pid)._tree():
            os.kill(k, signal.SIGKILL)
        p.kill()
        p.wait()


# --------------------------------------------------------------------------- processes and secrets
def test_the_worker_environment_drops_keys_and_tokens(tmp_path):
    env = contain.minimal_env({"PATH": "/bin", "OPENAI_API_KEY": "sk-1", "HF_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "a",
                               "CUDA_VISIBLE_DEVICES": "0"}, tmp_path)
    assert env["PATH"] == "/bin" and env["CUDA_VISIBLE_DEVICES"] == "0"
    assert not any(k in env for k in ("OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY"))
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path)


def test_containment_is_described_for_results():
    d = contain.describe()
    assert set(d) >= {"environment", "filesystem", "network", "signals", "processes", "user", "parent memory"}
    assert ("landlock" in d["filesystem"]) == (contain.landlock_abi() >= 1)


_READER = ("import sys\ntry:\n    print(len(open(f'/proc/{sys.argv[1]}/environ', 'rb').read()))\n"
           "except OSError as e:\n    print('refused', e.errno)\n")


@pytest.mark.skipif(not LINUX, reason="prctl and /proc are Linux's")
def test_a_protected_process_keeps_its_environment_from_a_worker(tmp_path):
    """A process that called protect_process (the executor, the timer) cannot have its
    environment read by a process started the way workers are (same user; as root, with no
    capability), while an unprotected one can."""
    holder = ("import sys, time\nfrom workbench.execution import contain\n"
              "if sys.argv[1] == 'yes':\n    contain.protect_process()\nprint('up', flush=True)\ntime.sleep(30)\n")
    env = dict(os.environ, WB_TEST_MARKER="marker-value")
    for protect, expect_refused in (("yes", True), ("no", os.geteuid() == 0)):
        h = subprocess.Popen([sys.executable, "-c", holder, protect], env=env, stdout=subprocess.PIPE, text=True)
        try:
            assert h.stdout.readline().strip() == "up"
            argv = contain.supervisor_argv([sys.executable, "-c", _READER, str(h.pid)], -1, 2**30, None, None)
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
            assert out.startswith("refused") == expect_refused, (protect, out)
        finally:
            h.kill()
            h.wait()


def test_weights_cross_as_a_plain_state_dict(tmp_path):
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).to(torch.bfloat16)
    tensorfile.write_state(tmp_path / "w", m.state_dict())
    back = tensorfile.read_state(tmp_path / "w")
    assert list(back) == list(m.state_dict())
    assert all(torch.equal(back[k], v) and back[k].dtype == v.dtype for k, v in m.state_dict().items())


def test_scrub_removes_keys_and_keeps_ids():
    env = {"MY_API_KEY": "value-of-my-key-1234", "PATH": "/usr/bin", "SHORT_TOKEN": "abc"}
    text = ("openai sk-proj-AbCdEf0123456789xyzXYZ hf hf_AbCdEfGhIjKlMnOpQrSt gh ghp_AbCdEfGhIjKlMnOpQrStUvWx "
            "aws AKIAABCDEFGHIJKLMNOP env value-of-my-key-1234 path /usr/bin short abc "
            "id 9fac1415f357cdba6e0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5 "
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U "
            "token Zq8vR2mX9kL4pT7wY3nB6cF1hJ5sD0gA")
    out = scrub(text, env)
    for gone in ("sk-proj", "hf_AbCd", "ghp_AbCd", "AKIAABCD", "value-of-my-key", "eyJhbGci", "Zq8vR2mX"):
        assert gone not in out, gone
    assert "9fac1415f357cdba" in out and "/usr/bin" in out and "short abc" in out
    assert out.count(REDACTED) == 7


def test_each_gpu_of_a_machine_keeps_its_own_timing_core(monkeypatch):
    from workbench.execution import executors

    monkeypatch.setattr(executors, "_gpus_on_machine", lambda: 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    t0, w0 = executors.timing_cores([0])
    t1, w1 = executors.timing_cores([1])
    # Two executors side by side (one per GPU): different timing cores, and neither's
    # workers compile on either timing core.
    assert t0 == {0: [0]} and t1 == {1: [1]} and w0 == w1 == list(range(2, 16))
    # The same two GPUs chosen by CUDA_VISIBLE_DEVICES: each process calls its GPU 0.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    assert executors.timing_cores([0]) == ({0: [1]}, list(range(2, 16)))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert executors.timing_cores([0]) == ({0: [0]}, list(range(2, 16)))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(6)), raising=False)
    assert executors.timing_cores([0]) == ({}, [])


def test_reasons_logs_and_prompts_are_scrubbed_before_they_are_kept_or_sent():
    from workbench.execution.hardware import cpu_hardware
    from workbench.execution.verdict import result_to_measurement
    from workbench.records import Candidate, Problem
    from workbench.search.generators import describe_result

    key = "sk-live-0123456789abcdefABCDEF"
    p = Problem(id="L1/x", level=1, name="x", source="# reference\n")
    c = Candidate.from_source(p.id, "class ModelNew: pass\n")
    m = result_to_measurement({"status": "runtime_error", "reason": f"boom {key}", "traceback": f"at {key}"}, p, c,
                              cpu_hardware(), log=f"printed {key}")
    assert key not in m.reason + m.log and REDACTED in m.reason and m.log.count(REDACTED) == 2
    assert key not in describe_result(m.replace(reason=f"again {key}", log=f"and {key}"))


def test_ipc_handles_cross_as_all_their_bytes():
    """A CUDA IPC handle holds NUL bytes; its text form must carry all 64 (no CUDA needed)."""
    import ctypes

    from workbench.execution import gate_cuda

    raw = bytes([1, 2, 0, 0, 5]) + bytes(50) + bytes([9] * 9)
    h = gate_cuda._IpcHandle()
    ctypes.memmove(ctypes.addressof(h), raw, len(raw))
    text = gate_cuda.handle_hex(h)
    assert len(text) == 128 and bytes.fromhex(text) == raw
    back = gate_cuda.handle_from_hex(text)
    assert ctypes.string_at(ctypes.addressof(back), 64) == raw
    with pytest.raises(ValueError, match="4 bytes"):
        gate_cuda.handle_from_hex("01020000")
