"""A store whose candidate, measurement and forecast texts carry script payloads, the way a
hostile candidate or model answer would write them (source, origin, failure reason, log,
reasoning), for the app's escaping tests. Test modules import `hostile_store` (a fixture) from here."""
from __future__ import annotations

import pytest

#: Runs script if a page ever inserts it as HTML; a Markdown image fetches an outside URL.
PAYLOAD = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
OUTSIDE_IMAGE = "![t](http://192.0.2.1/t.png)"
HOSTILE_ID = "hostile1"


def make_hostile_store(path):
    """A store at `path` holding one problem, a seed and the hostile candidate with its texts."""
    from workbench.problems import list_problems
    from workbench.records import Candidate, Forecast, Measurement, Status
    from workbench.store import Store

    store = Store(path)
    problem = list_problems()[0]
    store.put_problems([problem])
    seed = Candidate(id="seed0", problem_id=problem.id, source="class ModelNew:\n    pass\n")
    hostile = Candidate(id=HOSTILE_ID, problem_id=problem.id, parent_id=seed.id, generation=1,
                        source=f"# {PAYLOAD}\nclass ModelNew:\n    pass\n", origin=f"llm:{PAYLOAD}")
    store.put_candidates([seed, hostile])
    store.put_measurements([Measurement(
        candidate_id=HOSTILE_ID, problem_id=problem.id, hardware_key="h100", status=Status.INCORRECT,
        reason=f"wrong output {PAYLOAD}", log=f"compiling\n```\n{PAYLOAD}\n{OUTSIDE_IMAGE}\n")])
    store.put_forecasts([Forecast(
        forecaster="llm", candidate_id=HOSTILE_ID, problem_id=problem.id, hardware_key="h100",
        probabilities=(0.125,) * 8, reasoning=f"I think {PAYLOAD} {OUTSIDE_IMAGE}")])
    return store


@pytest.fixture
def hostile_store(tmp_path):
    """A store whose candidate texts carry script payloads (import this fixture into a test module)."""
    return make_hostile_store(tmp_path / "hostile.sqlite")
