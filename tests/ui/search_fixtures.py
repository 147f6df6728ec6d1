"""A store and a search builder for the search form's browser tests.

`make_search_store(path)`: every built-in problem (so the problem list offers them all), plus the
real shipped candidates and H100/H200 measurements of L1/12_layer_norm and L1/01_softmax; one
softmax H100 measurement's log is replaced by a log that holds only another candidate's
section (`FOREIGN_ONLY_ID`), as an older executor could record it.

`fixture_build(store, spec)`: what the app's runner builds for a spec (`compose.build`), except that
some budgets, chosen only by these tests, build a search that behaves in a known way:
- SLOW_PREPARE (77): the build itself takes PREPARE_S seconds (a fit, as far as the page can tell);
- SLOW_STEP (66): the forecaster takes STEP_S seconds per batch (a local model on a CPU);
- ABSTAIN (55): the forecaster abstains on every candidate, with a reason that carries markup;
- FAILING_ANSWERS (44): every parent also gets a failed generation whose answer is markup.
Every other budget builds the spec as the app would.
"""
from __future__ import annotations

import time
from dataclasses import replace

SLOW_PREPARE, SLOW_STEP, ABSTAIN, FAILING_ANSWERS = 77, 66, 55, 44
PREPARE_S, STEP_S = 60.0, 90.0
PROBLEMS = ("L1/12_layer_norm", "L1/01_softmax")
HOSTILE_ANSWER = "<img src=x onerror=\"document.title='pwned'\"> no code block here <b>bold</b>"
HOSTILE_REASON = "unparseable answer: <script>document.title='pwned'</script>"
FOREIGN_ONLY_ID: dict[str, str] = {}


def make_search_store(path):
    from workbench.dataset import load_shipped
    from workbench.problems import list_problems
    from workbench.store import Store

    rs = load_shipped()
    store = Store(path)
    store.put_problems(list_problems())
    store.put_candidates([c for c in rs.candidates if c.problem_id in PROBLEMS])
    ms = [m for m in rs.measurements if m.problem_id in PROBLEMS and m.hardware_key in ("h100", "h200")]
    target = sorted(m.candidate_id for m in ms if m.problem_id == "L1/01_softmax" and m.hardware_key == "h100"
                    and m.ok)[0]
    FOREIGN_ONLY_ID["id"] = target
    ms = [replace(m, log="=== candidate someoneelse ===\nanother candidate's output\n")
          if (m.candidate_id, m.hardware_key) == (target, "h100") else m for m in ms]
    store.put_measurements(ms)
    return store


class _SlowForecaster:
    """Roofline forecasts, each batch after `delay_s` seconds."""

    def __init__(self, delay_s: float):
        from workbench.forecast.roofline import RooflineForecaster

        self.inner, self.delay_s, self.name = RooflineForecaster(), delay_s, "slow-roofline"

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def for_run(self, *a, **kw):
        return self

    def forecast_batch(self, *a, **kw):
        time.sleep(self.delay_s)
        return self.inner.forecast_batch(*a, **kw)


class _AbstainingForecaster(_SlowForecaster):
    def __init__(self):
        super().__init__(0.0)
        self.name = "abstaining"

    def forecast_batch(self, items, hardware, relative_to="reference", parents=None):
        from workbench.records import Forecast

        return [Forecast.abstention(self.name, c.id, p.id, hardware.key, reason=HOSTILE_REASON,
                                    relative_to=relative_to) for p, c in items]


class _FailingAnswers:
    """A generator that adds one failed generation (a hostile answer) to each parent's children."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def children(self, ctx):
        from workbench.search.generators import FailedGeneration

        failed = FailedGeneration("the answer has no valid ```python block defining ModelNew", raw=HOSTILE_ANSWER,
                                  completion_tokens=12, seconds=0.5)
        return [failed] + list(self.inner.children(ctx))


def fixture_build(store, spec):
    from workbench import compose

    if spec.budget == SLOW_PREPARE:
        time.sleep(PREPARE_S)
    if spec.budget == SLOW_STEP:
        return compose.build(spec.replace(forecaster="roofline"), store, forecaster=_SlowForecaster(STEP_S))
    if spec.budget == ABSTAIN:
        return compose.build(spec.replace(forecaster="roofline"), store, forecaster=_AbstainingForecaster())
    run = compose.build(spec, store)
    if spec.budget == FAILING_ANSWERS:
        run.generator = _FailingAnswers(run.generator)
    return run



