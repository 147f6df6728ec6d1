"""A search whose generator has no seed to give ends as finished, with the reason, instead of
staying "running" in the database; both the stepped and the pipelined loop."""
from __future__ import annotations

import pytest

from conftest import NoisyOracleForecaster
from workbench.errors import ConfigError
from workbench.search import SearchRun, ZooGenerator, make_method


class _NoSeeds(ZooGenerator):
    def seeds(self, problem):
        raise ConfigError(f"nothing lowers for {problem.id}")


@pytest.mark.parametrize("pipeline", [0, 2])
def test_a_search_without_a_seed_is_finished_with_the_reason(store, replay, pipeline):
    problem, cands, ms, ex = replay
    run = SearchRun(store, problem, ex, _NoSeeds(), NoisyOracleForecaster(ms), make_method("screen_topk", k=2, m=2),
                    budget=5, pipeline=pipeline)
    with pytest.raises(ConfigError, match="nothing lowers"):
        run.run()
    info = store.get_search(run.search_id)
    assert info["state"] == "finished"
    assert info["summary"]["finish_reason"].startswith("no seed: nothing lowers")
    assert store.events(run.search_id)[-1]["kind"] == "finished"
