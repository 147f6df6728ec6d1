"""A replay never records a measurement that did not happen.

Kernels a generator writes during a replay (an LLM's, a mutation's) have no recording; the
replay's executor says it cannot measure them, and the loop writes an `unmeasurable` event
instead of a measurement: nothing is stored, no budget is used, they are never archived or
measured later, and the run ends after a few steps of nothing but such kernels.
"""
from __future__ import annotations

from conftest import ConfidencePolicy, NoisyOracleForecaster
from workbench.execution.executors import CacheExecutor
from workbench.search import LLMGenerator, ReplayGenerator, SearchRun, make_method
from workbench.search.events import Archived, Measured, Unmeasurable, decode_all


class _ScriptedChat:
    """Writes a new, valid ModelNew module on every call (a stand-in for a model server)."""

    model = "scripted"

    def __init__(self):
        self.calls = 0

    def chat(self, messages, **kw):
        self.calls += 1
        n = self.calls

        class R:
            text = f"```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    WRITTEN = {n}\n```\n"
            prompt_tokens, completion_tokens, seconds = 10, 20, 0.1
        return R()


def _replay_store(store, pool):
    """The store as the app has it: the recorded measurements are in it, and the replay answers
    from them (`CacheExecutor.from_store`)."""
    problem, cands, ms = pool
    store.put_problems([problem])
    store.put_candidates(cands)
    store.put_measurements(ms)
    return problem, cands, CacheExecutor.from_store(store, "h100")


def test_a_replay_with_the_llm_generator_leaves_the_measurements_unchanged(store, pool):
    problem, cands, ex = _replay_store(store, pool)
    before = sorted((m.candidate_id, m.hardware_key, m.status.value, m.measured_at) for m in store.measurements())
    chat = _ScriptedChat()
    gen = LLMGenerator(chat, seed_from=ReplayGenerator(cands, ex.candidate_ids, max_seeds=2))
    run = SearchRun(store, problem, ex, gen, None, make_method("measure_all", k=2), budget=10, max_seeds=2)
    summary = run.run()
    after = sorted((m.candidate_id, m.hardware_key, m.status.value, m.measured_at) for m in store.measurements())
    assert after == before  # not one measurement added, changed or re-dated
    events = decode_all(store.events(run.search_id))
    written = {e.candidate.id for e in events if getattr(e, "candidate", None) is not None
               and e.candidate.origin.startswith("llm:")}
    unmeasurable = {e.candidate_id for e in events if isinstance(e, Unmeasurable)}
    measured = {e.measurement.candidate_id for e in events if isinstance(e, Measured)}
    archived = {e.entry.candidate_id for e in events if isinstance(e, Archived)}
    assert written and unmeasurable == written  # every written child chosen for the GPU was refused
    assert not measured & written and not archived & written
    assert summary["gpu_measurements"] == len(measured) == 2  # the two recorded seeds, nothing else
    assert "no recording" in next(e for e in events if isinstance(e, Unmeasurable)).reason
    assert "cannot measure" in summary["finish_reason"] and summary["finished"]
    assert chat.calls <= 2 * 3 + 2  # ended after 3 steps of only unmeasurable children


def test_trusted_children_without_a_recording_are_never_measured_later(store, pool):
    """A selective method may trust a written child (its forecast stands in); once the generator
    runs dry the loop measures trusted candidates, but never one the replay cannot measure."""

    problem, cands, ex = _replay_store(store, pool)
    n_before = len(store.measurements())
    gen = LLMGenerator(_ScriptedChat(), seed_from=ReplayGenerator(cands, ex.candidate_ids, max_seeds=2))
    method = make_method("selective", k=2, m=2, policy=ConfidencePolicy(0.0))
    run = SearchRun(store, problem, ex, gen, NoisyOracleForecaster(pool[2]), method, budget=10, max_seeds=2,
                    max_idle=1)
    run.run()
    events = decode_all(store.events(run.search_id))
    measured = {e.measurement.candidate_id for e in events if isinstance(e, Measured)}
    assert measured <= ex.candidate_ids and len(store.measurements()) == n_before


def test_a_resumed_replay_keeps_the_unmeasurable_state(store, pool):
    problem, cands, ex = _replay_store(store, pool)

    def build():
        gen = LLMGenerator(_ScriptedChat(), seed_from=ReplayGenerator(cands, ex.candidate_ids, max_seeds=2))
        return SearchRun(store, problem, ex, gen, None, make_method("measure_all", k=2), budget=10, max_seeds=2)

    run = build()
    run.run(max_steps=2)
    streak = run.unmeasurable_steps
    again = build().resume(run.search_id)
    assert again.unmeasurable == run.unmeasurable and again.unmeasurable_steps == streak
