"""Typed search events: the stored JSON round-trips through `decode` / `to_payload` unchanged,
old payloads (keys added later missing) still decode, unknown kinds are kept, not refused."""
from __future__ import annotations

import pytest

from conftest import ConfidencePolicy, NoisyOracleForecaster
from workbench.search import ReplayGenerator, SearchRun, make_method
from workbench.search import events as ev


def _run(store, replay, method, budget, **kw):
    problem, cands, ms, ex = replay
    policy = {"policy": ConfidencePolicy(0.6)} if method == "selective" else {}
    return SearchRun(store, problem, ex, ReplayGenerator(cands, ex.candidate_ids), NoisyOracleForecaster(ms),
                     make_method(method, k=2, m=3, **policy), budget=budget, seed=0, **kw)


@pytest.mark.parametrize("method,kw", [("selective", {}), ("selective", {"in_flight": 2}),
                                       ("selective", {"pipeline": 3})])
def test_every_stored_event_round_trips_exactly(store, replay, method, kw):
    """What the loop stored is exactly what its typed event writes back: every kind it wrote."""
    run = _run(store, replay, method, budget=8, **kw)
    run.run()
    stored = store.events(run.search_id)
    kinds = {e["kind"] for e in stored}
    assert {"started", "selected", "generated", "forecast", "queued", "measuring", "measured", "archived",
            "step_done", "finished"} <= kinds
    for row in stored:
        e = ev.decode(row)
        assert type(e) is ev.KINDS[row["kind"]] and e.kind == row["kind"]
        assert e.to_payload() == row["payload"], row["kind"]


def test_old_payloads_without_later_keys_decode():
    assert ev.decode({"kind": "started", "payload": {"step": 0, "config": {"budget": 3}}}).reference_ms is None
    done = ev.decode({"kind": "step_done", "payload": {"step": 4, "gpu_measurements": 2, "considered": 5}})
    assert (done.step, done.idle_steps, done.in_flight) == (4, 0, None)
    failed = ev.decode({"kind": "failed_generation", "payload": {"step": 1, "index": 2, "parent_id": "p",
                                                                 "reason": "no code", "raw": "x"}})
    assert (failed.reason, failed.prompt_tokens, failed.key()) == ("no code", 0, "2")


def test_optional_keys_are_written_only_when_set():
    assert ev.Selected(step=3, parent_id="p").to_payload() == {"step": 3, "parent_id": "p"}
    assert ev.Selected(step=3, parent_id=None, deferred=True, slot=1).to_payload() == {
        "step": 3, "parent_id": None, "slot": 1, "deferred": True}
    assert ev.Measuring(step=0, candidate_ids=("a", "b")).to_payload() == {"step": 0, "candidate_ids": ["a", "b"]}
    assert ev.Trusted(step=2, candidate_id="c").to_payload() == {"step": 2, "candidate_id": "c",
                                                                 "expected_speedup": None}


def test_unknown_kind_is_kept_as_stored():
    e = ev.decode({"kind": "annotated", "payload": {"step": 7, "note": "hi"}})
    assert isinstance(e, ev.UnknownEvent) and e.stored_kind == "annotated" and e.step == 7
    assert e.to_payload() == {"step": 7, "note": "hi"}
