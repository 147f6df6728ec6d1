"""`workbench search` reuses a fitted learned forecaster from the on-disk cache and says so on
stderr; LLM settings errors name the CLI flags and variables."""
from __future__ import annotations

from conftest import synthetic_db
from workbench.cli import main


def test_second_search_loads_the_cached_fit(tmp_path, capsys, monkeypatch):
    import workbench.forecast.fitted as fitted

    db = synthetic_db(tmp_path)
    args = ["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100",
            "--method", "screen_topk", "--budget", "4", "--forecaster", "learned", "--no-progress",
            "--k", "2", "--m", "2", "--cache-dir", str(tmp_path / "cache")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "fitting learned forecaster on 60 rows (H100)... done in" in err  # the other problem's 60
    fits = []
    real = fitted._learned_fitter

    def counting(settings):
        fit = real(settings)

        def counted(*a):
            fits.append(settings)
            return fit(*a)
        return counted

    monkeypatch.setattr(fitted, "_learned_fitter", counting)
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "loaded cached learned forecaster fitted on 60 rows (H100)" in err and "fitting" not in err
    assert fits == []  # no fit ran
    assert main(args[:-2] + ["--cache-dir", str(tmp_path / "other")]) == 0  # another cache: fits
    assert len(fits) == 1 and "fitting learned forecaster" in capsys.readouterr().err
    assert len(list((tmp_path / "cache" / "fitted").glob("*.joblib"))) == 1


def test_llm_settings_errors_speak_cli(tmp_path, capsys, monkeypatch):
    for var in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL", "WORKBENCH_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    db = synthetic_db(tmp_path)
    base = ["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100",
            "--method", "screen_topk", "--budget", "4", "--no-progress"]
    assert main(base + ["--forecaster", "llm"]) == 1
    err = capsys.readouterr().err
    assert "--llm-base-url" in err and "WORKBENCH_LLM_BASE_URL" in err and "base_url=" not in err
    assert main(base + ["--forecaster", "roofline", "--generator", "llm",
                        "--llm-base-url", "http://127.0.0.1:9/v1"]) == 1
    err = capsys.readouterr().err
    assert "--llm-model" in err and "model=" not in err
