"""The parts of the hardened executor, one property each: frames, the reference-time check,
the executor's output comparison, the worker's environment, the judge's rules."""
from __future__ import annotations

import os
import struct

import pytest
import torch

from workbench.execution import contain, protocol, reference, tensorfile
from workbench.execution.verdict import judge


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


def test_reference_check_on_cpu_needs_every_sample_grossly_slow():
    assert reference.reference_finding([20.5, 21.0, 20.2], _clean(0.02), "cpu") is not None
    # One fast sample among slow ones (a busy machine), or a few ms: not flagged.
    assert reference.reference_finding([0.03, 21.0, 20.2], _clean(0.02), "cpu") is None
    assert reference.reference_finding([4.0, 5.0, 6.0], _clean(0.02), "cpu") is None


def test_executor_compares_whole_small_outputs(tmp_path):
    ref = torch.randn(40, 30)
    rm = tensorfile.write_outputs(tmp_path, "r", ref)
    good = tensorfile.write_outputs(tmp_path, "g", ref + 1e-7)
    bad = ref.clone()
    bad[17, 3] += 1.0   # one element wrong
    bm = tensorfile.write_outputs(tmp_path, "b", bad)
    assert tensorfile.compare_files(tmp_path, good, tmp_path, rm) == (True, "")
    ok, why = tensorfile.compare_files(tmp_path, bm, tmp_path, rm)
    assert not ok and "1 of 1200 values" in why


def test_executor_samples_large_outputs_at_positions_the_worker_never_sees(tmp_path, monkeypatch):
    monkeypatch.setattr(tensorfile, "FULL_COMPARE_MAX", 1000)
    monkeypatch.setattr(tensorfile, "SAMPLE", 500)
    ref = torch.randn(100, 100)
    rm = tensorfile.write_outputs(tmp_path, "r", ref)
    half = ref.clone()
    half.view(-1)[::2] = 0.0     # half of the elements wrong: any sample of 500 sees some
    hm = tensorfile.write_outputs(tmp_path, "h", half)
    ok, why = tensorfile.compare_files(tmp_path, hm, tmp_path, rm)
    assert not ok and "sampled positions" in why


def test_executor_checks_dtype_shape_subclass_and_bf16(tmp_path):
    ref = torch.randn(8, 8).bfloat16()
    rm = tensorfile.write_outputs(tmp_path, "r", ref)
    assert tensorfile.compare_files(tmp_path, tensorfile.write_outputs(tmp_path, "s", ref.clone()), tmp_path, rm)[0]
    wrong = tensorfile.write_outputs(tmp_path, "w", ref.float())
    assert "dtype" in tensorfile.compare_files(tmp_path, wrong, tmp_path, rm)[1]
    shaped = tensorfile.write_outputs(tmp_path, "x", ref.reshape(4, 16))
    assert "shape" in tensorfile.compare_files(tmp_path, shaped, tmp_path, rm)[1]
    sub = [dict(rm[0], type="LazyTensor")]
    assert "subclass" in tensorfile.compare_files(tmp_path, sub, tmp_path, rm)[1]


def test_the_worker_environment_drops_keys_and_tokens(tmp_path):
    env = contain.minimal_env({"PATH": "/bin", "OPENAI_API_KEY": "sk-1", "HF_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "a",
                               "CUDA_VISIBLE_DEVICES": "0"}, tmp_path)
    assert env["PATH"] == "/bin" and env["CUDA_VISIBLE_DEVICES"] == "0"
    assert not any(k in env for k in ("OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY"))
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path)


def test_containment_is_described_for_results():
    d = contain.describe()
    assert set(d) >= {"environment", "filesystem", "network", "signals", "processes"}
    assert ("landlock" in d["filesystem"]) == (contain.landlock_abi() >= 1)


def _ref_data(tmp_path, timing=None):
    out = torch.randn(6, 5)
    pts = {"full size:seed0": tensorfile.write_outputs(tmp_path, "full size:seed0", out),
           "set0": tensorfile.write_outputs(tmp_path, "set0", out)}
    return reference.ReferenceData(str(tmp_path), pts, timing, reduced_k={p: 5 for p in pts}), out


def test_judge_keeps_failures_and_needs_every_check_for_ok(tmp_path):
    ref, out = _ref_data(tmp_path, _clean(1.0, 0.01))
    cand = tmp_path / "cand"
    cand.mkdir()
    assert judge({"status": "incorrect", "reason": "x"}, cand, None, "cuda", None)["status"] == "incorrect"
    assert judge({"status": "great"}, cand, None, "cuda", None)["status"] == "crashed"
    assert "did not ship" in judge({"status": "ok", "points": {}}, cand, ref, "cuda", None)["reason"]
    pts = {"full size:seed0": tensorfile.write_outputs(cand, "full size:seed0", out),
           "timed:0:set0": tensorfile.write_outputs(cand, "timed:0:set0", out * 0)}
    samples = [{"reference": [1.0] * 5, "candidate": [0.5] * 5}]
    v = judge({"status": "ok", "points": pts, "samples": samples}, cand, ref, "cuda", None)
    assert v["status"] == "cheat_suspected" and "timed run" in v["reason"]
    pts["timed:0:set0"] = tensorfile.write_outputs(cand, "timed:0:set0", out)
    v = judge({"status": "ok", "points": pts, "samples": samples}, cand, ref, "cuda", None)
    assert v["status"] == "ok" and v["speedup"] == pytest.approx(2.0)
    slowed = [{"reference": [3.0] * 5, "candidate": [0.5] * 5}]
    v = judge({"status": "ok", "points": pts, "samples": slowed}, cand, ref, "cuda", None)
    assert v["status"] == "cheat_suspected" and "clean process" in v["reason"]
    v = judge({"status": "ok", "points": pts, "samples": samples}, cand, ref, "cuda", 10.0)
    assert v["status"] == "cheat_suspected" and "roofline" in v["reason"]


def test_a_worker_that_cannot_start_costs_one_candidate_each_and_never_loops(tmp_path):
    # 30 MiB of address space: the worker's Python dies before it can take a job.
    from exec_fixtures import CPU_OPTIONS, load_fixtures
    from workbench.execution.chunked import run_chunk
    from workbench.execution.hardware import cpu_hardware
    from workbench.execution.job import MeasureJob, MeasureOptions
    from workbench.records import Candidate, Status

    f = next(x for x in load_fixtures("honest") if x.name == "relu_where")
    cands = [Candidate.from_source(f.problem.id, f.candidate.source + f"\n_V = {i}\n") for i in range(2)]
    job = MeasureJob(f.problem, cpu_hardware(), device="cpu", timeout_s=30, cache_root=tmp_path,
                     cpu_mem_bytes=30 * 2**20, options=MeasureOptions.from_dict(CPU_OPTIONS))
    ms = run_chunk(job, cands)
    assert [m.status for m in ms] == [Status.CRASHED, Status.CRASHED]
    assert all("before taking a job" in m.reason for m in ms)


def test_a_flag_by_the_reference_check_needs_a_second_clean_timing_to_agree(tmp_path):
    ref, out = _ref_data(tmp_path, _clean(1.0, 0.01))
    cand = tmp_path / "cand"
    cand.mkdir()
    pts = {"full size:seed0": tensorfile.write_outputs(cand, "full size:seed0", out),
           "timed:0:set0": tensorfile.write_outputs(cand, "timed:0:set0", out)}
    busy = [{"reference": [1.4] * 5, "candidate": [0.5] * 5}]   # the machine got busier meanwhile
    v = judge({"status": "ok", "points": pts, "samples": busy}, cand, ref, "cuda", None,
              retime=lambda: _clean(1.35, 0.01))
    assert v["status"] == "ok"
    slowed = [{"reference": [3.0] * 5, "candidate": [0.5] * 5}]  # slowed by the candidate: still flagged
    v = judge({"status": "ok", "points": pts, "samples": slowed}, cand, ref, "cuda", None,
              retime=lambda: _clean(1.02, 0.01))
    assert v["status"] == "cheat_suspected" and "timed alone twice" in v["reason"]


def test_clean_reference_is_timed_on_the_workers_timing_core():
    """The reference check compares the reference timed in a worker with the same reference
    timed in the clean process; both must run on the core the executor keeps for timing, or a
    launch-bound reference reads slower on one side for reasons of placement alone."""
    from workbench.execution import reference

    spec = reference.spec_for({"id": "p"}, "cuda", {"timing_cpus": [3]}, None)
    assert spec["timing_cpus"] == [3]
    other = reference.spec_for({"id": "p"}, "cuda", {"timing_cpus": [4]}, None)
    assert reference._spec_key(spec) != reference._spec_key(other)
    assert reference.spec_for({"id": "p"}, "cpu", {}, None)["timing_cpus"] is None
