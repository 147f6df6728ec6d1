"""`workbench search` end to end in replay mode on a synthetic pool stored in a temp database."""
from __future__ import annotations

from conftest import synthetic_db
from workbench.cli import main
from workbench.store import Store


def test_cli_search_replay_summary_and_list(tmp_path, capsys):
    db = synthetic_db(tmp_path)
    for forecaster, method in (("none", "measure_all"), ("learned", "screen_topk"), ("roofline", "uncertainty_aware")):
        rc = main(["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100",
                   "--method", method, "--budget", "9", "--forecaster", forecaster, "--seed", "1",
                   "--no-progress", "--k", "2", "--m", "2"])
        out = capsys.readouterr().out
        assert rc == 0, out
        assert "GPU measurements used:   9 / 9" in out and "best speedup:" in out
    assert main(["--db", str(db), "search", "--list"]) == 0
    listing = capsys.readouterr().out
    assert listing.count("finished") == 3 and "uncertainty_aware" in listing


def test_cli_errors_say_what_to_do(tmp_path, capsys):
    db = synthetic_db(tmp_path)
    assert main(["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:a100",
                 "--method", "measure_all", "--forecaster", "none"]) == 1
    assert "load-shipped" in capsys.readouterr().err
    assert main(["--db", str(db), "search", "--problem", "L1/90_synth_a", "--method", "screen_topk",
                 "--forecaster", "none"]) == 1
    assert "needs a forecaster" in capsys.readouterr().err


def test_cli_adapt_option_is_stored_and_kept_on_resume(tmp_path, capsys):
    db = synthetic_db(tmp_path)
    common = ["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100",
              "--method", "screen_topk", "--budget", "6", "--forecaster", "learned", "--no-progress",
              "--k", "2", "--m", "2"]
    ids = []
    for extra in (["--no-adapt"], []):
        assert main(common + extra) == 0
        ids.append(capsys.readouterr().err.split("search ", 1)[1].split(":", 1)[0])
    with Store(db) as st:
        assert [st.get_search(i)["adapt_forecasts"] for i in ids] == [False, True]
    # resuming without the flag keeps the search's own setting instead of refusing
    assert main(common + ["--resume", ids[0]]) == 0, capsys.readouterr().err


def test_cli_measured_reference_time_reaches_the_forecaster(tmp_path, capsys, monkeypatch):
    """--reference-time measured: the fitted learned forecaster reads measured reference times,
    and the run gives it the searched problem's (`for_run`: the forecaster the run forecasts
    with knows it; the fitted one is unchanged)."""
    import workbench.compose as compose

    made, per_step = [], []
    real = compose.make_forecaster

    def spy(*args, **kwargs):
        fc = real(*args, **kwargs)
        real_for_run = fc.for_run

        def for_run(*a, **kw):
            per_step.append(real_for_run(*a, **kw))
            return per_step[-1]

        fc.for_run = for_run
        made.append(fc)
        return fc

    monkeypatch.setattr(compose, "make_forecaster", spy)
    db = synthetic_db(tmp_path)
    assert main(["--db", str(db), "search", "--problem", "L1/90_synth_a", "--gpu", "replay:h100",
                 "--method", "screen_topk", "--budget", "6", "--forecaster", "learned",
                 "--reference-time", "measured", "--no-progress", "--k", "2", "--m", "2"]) == 0, \
        capsys.readouterr().err
    (fc,) = made
    assert fc.reference_time == "measured"
    last = per_step[-1].base  # adapted to the run's kernels (the default), over the run's copy
    assert ("L1/90_synth_a", "h100") in last.reference_ms_  # the run's own time
    assert ("L1/90_synth_a", "h100") not in fc.reference_ms_


def test_forecaster_choice_defaults_to_measured_reference_time(tmp_path):
    """A spec built without a reference time (a notebook, the app) fits the learned forecaster
    on measured reference times, the registry's default."""
    from workbench.compose import make_forecaster
    from workbench.spec import SearchSpec

    db = synthetic_db(tmp_path)
    spec = SearchSpec("L1/90_synth_a", forecaster="learned")
    with Store(db) as st:
        fc = make_forecaster(spec, st, st.get_problem("L1/90_synth_a"), "h100")
    assert fc.reference_time == "measured" and fc.n_train_ > 0
