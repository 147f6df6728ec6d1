"""The learned forecaster on SYNTHETIC records (workbench.evaluate.synthetic): no real data yet."""
from __future__ import annotations

import numpy as np
import pytest

from workbench import bins
from workbench.calibration import metrics
from workbench.errors import ConfigError, NotFittedError, WorkbenchError
from workbench.evaluate.synthetic import SYNTHETIC_HARDWARE, make_synthetic
from workbench.forecast.features import FEATURE_NAMES
from workbench.forecast.learned import LearnedForecaster, relative_distribution

H100 = SYNTHETIC_HARDWARE["h100"]


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_problems=12, per_problem=30, seed=1)


@pytest.fixture(scope="module")
def split(data):
    problems, candidates, measurements = data
    train_ids = {p.id for p in problems[:9]}
    train = [m for m in measurements if m.problem_id in train_ids]
    test = [m for m in measurements if m.problem_id not in train_ids]
    return train, test


@pytest.fixture(scope="module")
def model(data, split):
    problems, candidates, _ = data
    return LearnedForecaster(max_iter=40, seed=0).fit(problems, candidates, split[0])


def _rows(data, ms):
    P = {p.id: p for p in data.problems}
    C = {c.id: c for c in data.candidates}
    return [(P[m.problem_id], C[m.candidate_id]) for m in ms]


def test_fit_sets_learned_attributes(model, split):
    assert model.n_train_ == sum(m.ok for m in split[0])
    assert len(model.train_problems_) == 9 and model.hardware_keys_ == ["h100"]
    assert model.temperature_ > 0 and model.importances_.shape == model.medians_.shape


def test_beats_the_training_prior_on_unseen_problems(data, split, model):
    test_ok = [m for m in split[1] if m.ok]
    fs = model.forecast_batch(_rows(data, test_ok), H100)
    probs = np.array([f.probabilities for f in fs])
    y = np.array([m.bin for m in test_ok])
    prior = np.bincount([m.bin for m in split[0] if m.ok], minlength=8) + 1.0
    prior = np.tile(prior / prior.sum(), (len(y), 1))
    assert metrics.nll(probs, y) < metrics.nll(prior, y)
    assert metrics.crps(probs, y) < 0.85 * metrics.crps(prior, y)
    assert metrics.spearman(metrics.expected_log2(probs), np.log2([m.speedup for m in test_ok])) > 0.5
    assert all(abs(sum(f.probabilities) - 1) < 1e-9 for f in fs)
    assert all(f.problem_id not in model.train_problems_ for f in fs)


def test_p_fail_tracks_recorded_failures(data, split, model):
    rows = _rows(data, split[1])
    fs = model.forecast_batch(rows, H100)
    atomic = np.array(["tl.atomic_add" in c.source for _, c in rows])
    p_fail = np.array([f.p_fail for f in fs])
    assert np.all((p_fail > 0) & (p_fail < 1))
    assert p_fail[atomic].mean() > p_fail[~atomic].mean() + 0.1


def test_explain_names_features(data, split, model):
    rows = _rows(data, split[1][:3])
    f = model.forecast(*rows[0], H100)
    text = model.explain(f)
    assert "octaves" in text
    from workbench.forecast.features import FEATURE_NAMES
    assert any(n in text for n in FEATURE_NAMES) and any(n in f.reasoning for n in FEATURE_NAMES)
    other = f.replace(candidate_id="never-seen")
    with pytest.raises(WorkbenchError):
        model.explain(other)


def test_relative_distribution_by_hand():
    one = np.eye(8)[4]  # 1.0-1.41x, midpoint ~1.19x
    d = relative_distribution(one, one)
    # Difference 0 octaves spread over +-0.25: half below 1.0x (bin 3), half above (bin 4).
    assert d[3] == pytest.approx(0.5, abs=0.02) and d[4] == pytest.approx(0.5, abs=0.02)
    up = relative_distribution(np.eye(8)[6], np.eye(8)[2])  # ~2.8x over ~0.6x
    assert int(np.argmax(up)) == bins.bin_of(2.8 / 0.6)


def test_parent_relative_forecasts(data, split, model):
    (p, c), (_, c2) = _rows(data, split[1][:2])
    same = model.forecast(p, c, H100, parent=c, relative_to="parent")
    assert same.relative_to == "parent" and abs(same.expected_log2_speedup) < 0.3
    assert model.forecast(p, c, H100, relative_to="parent").abstained
    child = model.forecast(p, c, H100).expected_log2_speedup
    parent = model.forecast(p, c2, H100).expected_log2_speedup
    rel = model.forecast(p, c, H100, parent=c2, relative_to="parent").expected_log2_speedup
    assert rel == pytest.approx(child - parent, abs=0.35)


def test_save_load_roundtrip(tmp_path, data, split, model):
    rows = _rows(data, split[1][:5])
    path = model.save(tmp_path / "m.joblib")
    again = LearnedForecaster.load(path)
    a = [f.probabilities for f in model.forecast_batch(rows, H100)]
    b = [f.probabilities for f in again.forecast_batch(rows, H100)]
    np.testing.assert_allclose(a, b)
    (tmp_path / "bad.joblib").write_bytes(b"not a model")
    with pytest.raises(ConfigError):
        LearnedForecaster.load(tmp_path / "bad.joblib")


def test_misuse_errors(data):
    problems, candidates, measurements = data
    with pytest.raises(NotFittedError):
        LearnedForecaster().forecast(problems[0], candidates[0], H100)
    with pytest.raises(ConfigError):
        LearnedForecaster().fit(problems, candidates, measurements[:5])


def test_residual_bin_probabilities_by_hand():
    from workbench.forecast.learned import residual_bin_probabilities

    # Median 0.25 octaves (1.19x, bin 4) with residuals -1, 0, 0, +1 octave:
    # 0.59x (bin 2), 1.19x twice (bin 4), 2.38x (bin 6).
    p = residual_bin_probabilities(np.array([0.25]), np.array([-1.0, 0.0, 0.0, 1.0]), floor=0.0)[0]
    expect = np.zeros(8)
    expect[[2, 4, 6]] = [0.25, 0.5, 0.25]
    np.testing.assert_allclose(p, expect)
    # Exactly 1.0x (log2 = 0) is in bin 3 (closed on the right), as bins.bin_of says.
    q = residual_bin_probabilities(np.array([0.0]), np.array([0.0]), floor=0.0)[0]
    assert int(np.argmax(q)) == bins.bin_of(1.0) == 3
    floored = residual_bin_probabilities(np.array([0.0]), np.array([0.0]))[0]
    assert floored.min() > 0 and floored.sum() == pytest.approx(1.0)


def test_regression_distribution_is_ordinal(data, split, model):
    assert len(model.residuals_) == model.n_train_ == len(model.calibration_set()[1])
    rows = _rows(data, [m for m in split[1] if m.ok][:40])
    fs = model.forecast_batch(rows, H100)
    for f in fs:
        p = np.asarray(f.probabilities)
        k = int(np.argmax(p))
        # Mass near the predicted bin: its neighbours carry more than the far bins on average.
        near = p[max(0, k - 1): k + 2].sum()
        assert near > 0.3
        assert "median" in f.reasoning


def test_research_options_are_not_constructor_arguments():
    """The bin classifier and the temperature objective live in benchmarks/learned_variants.py."""
    for research in ({"kind": "classifier"}, {"calibration_objective": "nll"}):
        with pytest.raises(TypeError):
            LearnedForecaster(**research)


def _ideal_rows(seed: int, span: float, n: int = 600):
    """(X, speedups, groups): random features, log2-speedup = log2_ideal_speedup (uniform in
    [-span, span]) + N(0, 0.2) noise, 20 problems of n/20 rows."""
    from workbench.forecast.features import FEATURE_NAMES

    rng = np.random.default_rng(seed)
    col = FEATURE_NAMES.index("log2_ideal_speedup")
    X = rng.normal(size=(n, len(FEATURE_NAMES)))
    X[:, col] = rng.uniform(-span, span, n)
    speedups = 2.0 ** (X[:, col] + rng.normal(0, 0.2, n))
    return X, speedups, np.repeat(np.arange(20), n // 20).astype(str)


def test_fit_matrix_and_the_ideal_offset():
    from workbench.forecast.features import FEATURE_NAMES

    # Log2-speedup = the roofline ideal + noise, ideals in [-2, 2] for training: with the
    # target taken relative to a share of the ideal (the default, chosen by out-of-fold error),
    # a row with an ideal of 6 (far outside the training range) is forecast above every
    # training row; without it (share 0) the trees extrapolate flat.
    n, col = 600, FEATURE_NAMES.index("log2_ideal_speedup")
    X, speedups, groups = _ideal_rows(0, 2.0)
    speedups[:30] = np.nan  # failed candidates: p_fail only
    far = X[:1].copy()
    far[0, col] = 6.0
    with_offset = LearnedForecaster(max_iter=30).fit_matrix(X, speedups, groups, ["h100"])
    flat = LearnedForecaster(max_iter=30, ideal_offset=0.0).fit_matrix(X, speedups, groups)
    assert with_offset.n_train_ == n - 30 and with_offset.hardware_keys_ == ["h100"]
    assert with_offset.fail_model_ is not None
    top = np.nanmax(np.log2(speedups))
    assert with_offset.predict_median(far)[0] > top
    assert flat.predict_median(far)[0] < top
    assert flat.predict_median(far)[0] == pytest.approx(
        flat.predict_median(far - np.eye(1, len(FEATURE_NAMES), col) * 3)[0])
    p = with_offset.predict_proba(far)
    assert p.shape == (1, 8) and p.sum() == pytest.approx(1.0) and int(p.argmax()) == 7
    with pytest.raises(ConfigError):
        LearnedForecaster(ideal_offset=-1)
    with pytest.raises(ConfigError):
        LearnedForecaster().fit_matrix(X[:5], speedups[:5], groups[:5])


def test_auto_ideal_offset_is_chosen_by_out_of_fold_error_on_training_problems():
    from workbench.forecast.learned import OFFSET_GRID

    # log2-speedup = the whole ideal + noise: a target relative to the whole ideal is pure
    # noise, so the full share has the smallest out-of-fold error and "auto" must take it.
    X, speedups, groups = _ideal_rows(1, 3.0)
    auto = LearnedForecaster(max_iter=30).fit_matrix(X, speedups, groups)
    assert auto.ideal_offset == "auto"
    assert sorted(auto.offset_errors_) == sorted(OFFSET_GRID)
    assert auto.ideal_offset_ == min(auto.offset_errors_, key=auto.offset_errors_.get) == 1.0
    assert auto.offset_errors_[1.0] < auto.offset_errors_[0.25]
    fixed = LearnedForecaster(max_iter=30, ideal_offset=0.25).fit_matrix(X, speedups, groups)
    assert fixed.ideal_offset_ == 0.25 and list(fixed.offset_errors_) == [0.25]
    assert fixed.offset_errors_[0.25] == pytest.approx(auto.offset_errors_[0.25])
    with pytest.raises(ConfigError):
        LearnedForecaster(ideal_offset="half")


# ---------------------------------------------------------------- problem evidence (adapted)
def _held_out(data, split, pid=None):
    """(problem, [(candidate, speedup)] of its ok rows) for one held-out problem."""
    P = {p.id: p for p in data.problems}
    C = {c.id: c for c in data.candidates}
    pid = pid or split[1][0].problem_id
    rows = [(C[m.candidate_id], m.speedup) for m in split[1] if m.problem_id == pid and m.ok]
    return P[pid], rows


def test_evidence_correction_by_hand(data, split, model):
    from workbench.forecast.features import feature_matrix

    problem, rows = _held_out(data, split)
    X = feature_matrix([(problem, c, H100) for c, _ in rows])
    log2 = np.log2([s for _, s in rows])
    r = log2 - model.predict_median(X)
    # one evidence row: its error, wherever the forecast row is
    assert np.allclose(model.evidence_correction(X[:1], log2[:1], X[3:6]), r[0])
    # evidence rows with equal features: nothing to tell them apart, the mean error
    same = np.repeat(X[:1], 3, axis=0)
    assert np.allclose(model.evidence_correction(same, log2[:3], X[3:6]),
                       np.mean(log2[:3] - model.predict_median(same)))
    # two rows that differ in one feature: that feature scaled by its spread (|a - b| / 2) makes
    # their standardised distance 2, so d2 = 4 over the one varying column
    col = FEATURE_NAMES.index("num_warps")
    two = np.repeat(X[:1], 2, axis=0)
    two[1, col] += 4.0
    y2 = np.array([0.5, -0.5])
    r2 = y2 - model.predict_median(two)
    w = np.exp(-4.0 / 1.0)
    want0 = (r2[0] + w * r2[1] + 1.0 * r2.mean()) / (1 + w + 1.0)
    want1 = (w * r2[0] + r2[1] + 1.0 * r2.mean()) / (w + 1 + 1.0)
    assert np.allclose(model.evidence_correction(two, y2, two), [want0, want1])
    assert np.allclose(model.evidence_correction(two, y2, two, bandwidth=2.0, prior=0.5)[0],
                       (r2[0] + np.exp(-2.0) * r2[1] + 0.5 * r2.mean()) / (1 + np.exp(-2.0) + 0.5))
    with pytest.raises(ConfigError, match="positive"):
        model.evidence_correction(two, y2, two, bandwidth=0)


def test_adapted_forecasts_use_the_problems_measurements(data, split, model):
    """On every held-out problem, half its kernels measured as evidence: the other half's
    medians come closer to their measurements; other problems and GPUs are untouched."""
    errs_base, errs_adapted = [], []
    test_ids = sorted({m.problem_id for m in split[1]})
    for pid in test_ids:
        problem, rows = _held_out(data, split, pid)
        ev, rest = rows[::2], rows[1::2]
        fc = model.adapted(problem, H100, ev)
        base = model.forecast_batch([(problem, c) for c, _ in rest], H100)
        adapted = fc.forecast_batch([(problem, c) for c, _ in rest], H100)
        truth = np.log2([s for _, s in rest])
        errs_base.append(np.mean(np.abs([f.expected_log2_speedup for f in base] - truth)))
        errs_adapted.append(np.mean(np.abs([f.expected_log2_speedup for f in adapted] - truth)))
        assert all("measured kernel(s) of this problem move the median" in f.reasoning for f in adapted)
        assert fc.name == model.name
        other, other_rows = _held_out(data, split, next(t for t in test_ids if t != pid))
        c = other_rows[0][0]
        assert (fc.forecast(other, c, H100).probabilities == model.forecast(other, c, H100).probabilities)
        h200 = SYNTHETIC_HARDWARE["h200"]
        assert (fc.forecast(problem, rest[0][0], h200).probabilities
                == model.forecast(problem, rest[0][0], h200).probabilities)
    assert np.mean(errs_adapted) < np.mean(errs_base)
    # no evidence: exactly the base forecaster's forecasts
    problem, rows = _held_out(data, split)
    assert (model.adapted(problem, H100, []).forecast(problem, rows[0][0], H100).probabilities
            == model.forecast(problem, rows[0][0], H100).probabilities)
    assert data.problems[0].id != problem.id
    with pytest.raises(ConfigError, match="candidates of that problem"):
        model.adapted(data.problems[0], H100, rows[:1])


def test_for_run_returns_a_new_forecaster_and_leaves_the_fitted_one_unchanged(data, split):
    """`for_run` gives a run's forecaster: its reference time for the pair (the median of the
    run's measured ones, else the prior, else none) and, with kernels, the adapted correction;
    the fitted forecaster's recorded times and forecasts are the same after as before."""
    from workbench.forecast.roofline import RooflineForecaster
    from workbench.records import RunEvidence

    problems, candidates, _ = data
    fc = LearnedForecaster(max_iter=30, seed=0, reference_time="measured", reference_use="feature").fit(
        problems, candidates, split[0])
    problem, rows = _held_out(data, split)
    run_ms = [m for m in split[1] if m.problem_id == problem.id][:4]
    key = (problem.id, "h100")
    times, probe = dict(fc.reference_ms_), [(problem, c) for c, _ in rows[:6]]
    before = [f.probabilities for f in fc.forecast_batch(probe, H100)]

    prior_only = fc.for_run(problem, H100, RunEvidence(prior_reference_ms=2.5))
    assert prior_only is not fc and prior_only.reference_ms_[key] == 2.5
    measured = fc.for_run(problem, H100, RunEvidence(measurements=tuple(run_ms), prior_reference_ms=2.5))
    assert measured.reference_ms_[key] == pytest.approx(float(np.median([m.reference_ms for m in run_ms if m.reference_ms])))
    adapted = fc.for_run(problem, H100, RunEvidence(measurements=tuple(run_ms), kernels=tuple(rows[:3])))
    want = measured.adapted(problem, H100, rows[:3]).forecast_batch(probe, H100)
    assert [f.probabilities for f in adapted.forecast_batch(probe, H100)] == [f.probabilities for f in want]
    assert all("measured kernel(s) of this problem move the median" in f.reasoning for f in want)
    assert [f.probabilities for f in prior_only.forecast_batch(probe, H100)] != before  # the time is read
    assert fc.reference_ms_ == times and key not in fc.reference_ms_
    assert [f.probabilities for f in fc.forecast_batch(probe, H100)] == before
    roofline = RooflineForecaster()  # the base class's default: nothing to learn from a run
    assert roofline.for_run(problem, H100, RunEvidence(measurements=tuple(run_ms))) is roofline
    assert roofline.with_reference_times(run_ms) is roofline


# ---------------------------------------------------------------- held-out calibration set
def test_calibration_set_is_the_out_of_fold_forecasts_of_the_training_rows(data, split, model):
    probs, y = model.calibration_set()
    ok = [m for m in split[0] if m.ok]
    assert probs.shape == (len(ok), 8) and np.allclose(probs.sum(axis=1), 1.0)
    assert np.array_equal(np.bincount(y, minlength=8), np.bincount([m.bin for m in ok], minlength=8))
    # the temperature is fitted so the mean confidence matches the accuracy on exactly these rows
    assert probs.max(axis=1).mean() == pytest.approx(np.mean(probs.argmax(axis=1) == y), abs=0.02)
    # out of fold: a row's problem was held out, so the set is less accurate than in-sample forecasts
    X_rows = _rows(data, ok)
    in_sample = np.array([f.probabilities for f in model.forecast_batch(X_rows, H100)])
    y_rows = np.array([m.bin for m in ok])
    assert metrics.nll(probs, y) > metrics.nll(in_sample, y_rows)
    # the adapted forecaster hands on its base's set; one training problem gives none
    problem, evidence = _held_out(data, split)
    assert np.array_equal(model.adapted(problem, H100, evidence).calibration_set()[0], probs)
    problems, candidates, _ = data
    one = [m for m in split[0] if m.problem_id == split[0][0].problem_id]
    assert LearnedForecaster(max_iter=20).fit(problems, candidates, one).calibration_set() is None


# ---------------------------------------------------------------- measured reference times
def test_with_reference_times_takes_each_pairs_median_in_a_copy(data):
    problems, _, measurements = data
    blank = LearnedForecaster(reference_time="measured")
    pid = problems[0].id
    mine = [m for m in measurements if m.problem_id == pid and m.reference_ms]
    fc = blank.with_reference_times(measurements)
    assert blank.reference_ms_ == {} and fc is not blank  # the original is never changed
    assert fc.reference_ms_[(pid, "h100")] == pytest.approx(float(np.median([m.reference_ms for m in mine])))
    # failures carry no reference time here and are skipped; every pair with one is recorded
    assert set(fc.reference_ms_) == {(m.problem_id, m.hardware_key) for m in measurements if m.reference_ms}
    # a later call replaces a pair's time and leaves the others
    other = problems[1].id
    before = fc.reference_ms_[(other, "h100")]
    later = fc.with_reference_times([mine[0].replace(reference_ms=123.0)])
    assert later.reference_ms_[(pid, "h100")] == 123.0 and later.reference_ms_[(other, "h100")] == before
    assert fc.reference_ms_[(pid, "h100")] != 123.0
    same = later.with_reference_times([mine[0].replace(reference_ms=None), mine[0].replace(reference_ms=-1.0)])
    assert same.reference_ms_[(pid, "h100")] == 123.0
    with pytest.raises(ConfigError, match="reference_time"):
        LearnedForecaster(reference_time="guess")


def test_measured_reference_time_replaces_the_estimate_where_known(data):
    from workbench.forecast.features import feature_matrix

    problems, candidates, measurements = data
    ref = FEATURE_NAMES.index("ref_log10_us")
    rows = [(p, c, H100) for p, c in _rows(data, [m for m in measurements if m.ok][:40])]
    estimate = feature_matrix(rows)
    known_pid = rows[0][0].id
    fc = LearnedForecaster(reference_time="measured", reference_use="feature").with_reference_times(
        [next(m for m in measurements if m.problem_id == known_pid).replace(reference_ms=2.5)])
    X = fc._features(rows)
    known = np.array([p.id == known_pid for p, _, _ in rows])
    assert known.any() and (~known).any()
    np.testing.assert_allclose(X[known, ref], np.log10(1 + 1e3 * 2.5))
    np.testing.assert_array_equal(X[~known], estimate[~known])  # unknown problems keep the estimate
    np.testing.assert_array_equal(np.delete(X, ref, axis=1), np.delete(estimate, ref, axis=1))
    # the default forecaster records times but never uses them
    default = LearnedForecaster().with_reference_times(measurements)
    np.testing.assert_array_equal(default._features(rows), estimate)


def test_crossval_gives_held_out_problems_their_reference_times(data):
    """evaluate() gives the scored rows' reference times to the fitted forecaster before
    forecasting them (a copy: the fitted one knows the training problems' only): its forecasts
    equal a forecaster fitted by hand on the other problems and given those times, and differ
    from the same forecaster without them (the times are used)."""
    from workbench.evaluate.crossval import evaluate

    problems, candidates, measurements = data
    held = [p.id for p in problems[-3:]]
    made = []

    def make():
        made.append(LearnedForecaster(max_iter=30, seed=0, reference_time="measured"))
        return made[-1]

    result = evaluate(make, problems, candidates, measurements, gpu="h100", test_problems=held)
    fitted = made[-1]
    assert {pid for pid, _ in fitted.reference_ms_} == {p.id for p in problems} - set(held)
    assert not set(held) & set(fitted.train_problems_)
    scored = [m for m in measurements if m.problem_id in held and m.ok]
    by_hand = LearnedForecaster(max_iter=30, seed=0, reference_time="measured").fit(
        problems, candidates, [m for m in measurements if m.problem_id not in held])
    blind = [f.probabilities for f in by_hand.forecast_batch(_rows(data, scored), H100)]
    by_hand = by_hand.with_reference_times(scored)
    told = [f.probabilities for f in by_hand.forecast_batch(_rows(data, scored), H100)]
    np.testing.assert_allclose([f.probabilities for f in result.forecasts], told)
    assert not np.allclose(blind, told)


def test_a_model_saved_in_an_older_format_is_refused_with_a_refit_message(tmp_path, model):
    import joblib

    path = tmp_path / "old.joblib"
    joblib.dump({"format": "workbench.learned/4", "features": FEATURE_NAMES, "model": model}, path)
    with pytest.raises(ConfigError, match="re-fit"):
        LearnedForecaster.load(path)


def test_measured_reference_matrix_by_hand():
    from workbench.forecast.learned import measured_reference_matrix

    ref, ideal, share = (FEATURE_NAMES.index(n) for n in
                         ("ref_log10_us", "log2_ideal_speedup", "ref_launch_share"))
    X = np.zeros((3, len(FEATURE_NAMES)))
    X[:, ref] = np.log10(1 + 1e3 * 0.1)  # every estimate: 0.1 ms
    X[:, ideal] = 2.0
    X[:, share] = 0.5
    measured = np.array([0.4, 0.05, np.nan])  # 4x slower, 2x faster, unknown
    feat = measured_reference_matrix(X, measured, "feature")
    np.testing.assert_allclose(feat[:, ref], np.log10(1 + 1e3 * np.array([0.4, 0.05, 0.1])))
    np.testing.assert_array_equal(np.delete(feat, ref, axis=1), np.delete(X, ref, axis=1))
    every = measured_reference_matrix(X, measured, "everywhere")
    np.testing.assert_allclose(every[:, ref], feat[:, ref])
    np.testing.assert_allclose(every[:, ideal], [4.0, 1.0, 2.0])  # + log2(measured / estimate)
    np.testing.assert_allclose(every[:, share], [0.125, 1.0, 0.5])  # x estimate / measured
    assert X[0, ref] == pytest.approx(np.log10(101.0))  # the input is not changed
    with pytest.raises(ConfigError, match="everywhere"):
        measured_reference_matrix(X, measured, "both")
    with pytest.raises(ConfigError, match="reference_use"):
        LearnedForecaster(reference_use="sometimes")


def _reference_rows(seed: int, informative: bool, n: int = 600):
    """(estimate-based X, speedups, groups, measured reference ms): 20 problems whose estimated
    reference time is off by a per-problem factor 2^e (e uniform in [-2, 2]). With
    `informative`, log2-speedup = log2_ideal_speedup + e (+ noise): the measured time carries
    what the estimate misses, and measured = estimate x 2^e; otherwise the speedup follows the
    estimate and the "measured" times are the estimate x 2^e with e unrelated to the speedups."""
    X, _, groups = _ideal_rows(seed, 2.0, n)
    rng = np.random.default_rng(seed + 100)
    ref, ideal = FEATURE_NAMES.index("ref_log10_us"), FEATURE_NAMES.index("log2_ideal_speedup")
    X[:, ref] = np.log10(1 + 1e3 * 0.2)
    e_problem = rng.uniform(-2, 2, 20)
    e = e_problem[groups.astype(int)]
    noise = rng.normal(0, 0.2, n)
    log2s = X[:, ideal] + (e if informative else 0.0) + noise
    return X, 2.0 ** log2s, groups, 0.2 * 2.0 ** e


@pytest.mark.parametrize("informative, expected", [(True, "everywhere"), (False, "feature")])
def test_auto_reference_use_is_chosen_by_out_of_fold_error(informative, expected):
    """Where the measured time explains the speedups through the roofline term, "auto" puts it
    everywhere; where it does not, the roofline term keeps the estimate. The choice is the use
    with the smaller recorded out-of-fold error, the forecaster then predicts on matrices built
    the same way, and a fixed use gives the same error as auto recorded for it."""
    from workbench.forecast.learned import measured_reference_matrix

    X, speedups, groups, ms = _reference_rows(3, informative)
    auto = LearnedForecaster(max_iter=30, reference_time="measured").fit_matrix(
        X, speedups, groups, reference_ms=ms)
    assert auto.reference_use == "auto" and sorted(auto.use_errors_) == ["everywhere", "feature"]
    assert auto.reference_use_ == min(auto.use_errors_, key=auto.use_errors_.get) == expected
    fixed = LearnedForecaster(max_iter=30, reference_time="measured",
                              reference_use=expected).fit_matrix(X, speedups, groups,
                                                                 reference_ms=ms)
    assert fixed.reference_use_ == expected and fixed.use_errors_ == {}
    assert min(fixed.offset_errors_.values()) == pytest.approx(auto.use_errors_[expected])
    Xm = measured_reference_matrix(X, ms, expected)
    np.testing.assert_allclose(auto.predict_proba(Xm), fixed.predict_proba(Xm))
    err = np.mean(np.abs(auto.predict_median(Xm) - np.log2(speedups)))
    other = "feature" if expected == "everywhere" else "everywhere"
    assert err < np.mean(np.abs(auto.predict_median(measured_reference_matrix(X, ms, other))
                                - np.log2(speedups)))
    # an estimate model ignores the times
    est = LearnedForecaster(max_iter=30, reference_time="estimate").fit_matrix(
        X, speedups, groups, reference_ms=ms)
    assert est.reference_use_ is None and est.use_errors_ == {}


def test_fit_with_measured_times_forecasts_with_the_chosen_use(data, split):
    """fit() on records: the training rows' measured times enter the features as the chosen
    use says, and a forecast of rows with recorded times equals predict_proba on the matrix
    built with that use."""
    from workbench.forecast.features import feature_matrix
    from workbench.forecast.learned import measured_reference_matrix

    problems, candidates, measurements = data
    train, test = split
    fc = LearnedForecaster(max_iter=30, seed=0, reference_time="measured").fit(
        problems, candidates, train)
    assert fc.reference_use_ in ("feature", "everywhere") and len(fc.use_errors_) == 2
    fc = fc.with_reference_times(test)
    scored = [m for m in test if m.ok][:30]
    rows = [(p, c, H100) for p, c in _rows(data, scored)]
    ms = np.asarray([fc.reference_ms_[(p.id, "h100")] for p, _, _ in rows])
    want = fc.predict_proba(measured_reference_matrix(feature_matrix(rows), ms, fc.reference_use_))
    got = [f.probabilities for f in fc.forecast_batch(_rows(data, scored), H100)]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)
