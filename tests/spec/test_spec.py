"""SearchSpec and Target as values: parsing once, typed errors naming the accepted forms,
to_dict / from_dict round trips, replace and diff."""
from __future__ import annotations

import json

import pytest

from workbench.errors import ConfigError
from workbench.spec import ForecasterChoice, MethodChoice, SearchSpec, Target, TargetError


@pytest.mark.parametrize("text, target", [
    ("replay:h100", Target("replay", key="h100")),
    ("REPLAY:H200", Target("replay", key="h200")),
    ("cuda", Target("cuda", index=0)),
    ("cuda:3", Target("cuda", index=3)),
    ("cpu", Target("cpu")),
    ("ray", Target("ray", device="cuda")),
    ("ray:ray://head:10001", Target("ray", device="cuda", address="ray://head:10001")),
    ("ray-cpu:auto", Target("ray", device="cpu", address="auto")),
])
def test_targets_parse_once_and_print_back(text, target):
    assert Target.parse(text) == target
    assert Target.parse(str(target)) == target
    assert Target.from_dict(target.to_dict()) == target


@pytest.mark.parametrize("bad", ["", "gpu0", "cuda:x", "replay:", "cpu:1", "h100", "cuda:-1"])
def test_a_bad_target_names_the_accepted_forms(bad):
    with pytest.raises(TargetError) as e:
        Target.parse(bad)
    assert isinstance(e.value, ConfigError)
    assert all(form in str(e.value) for form in ("replay:KEY", "cuda:N", "cpu", "ray:ADDRESS"))


def test_the_ray_executor_turns_live_targets_into_cluster_targets():
    assert Target.parse("cpu").with_executor("ray", "auto") == Target("ray", device="cpu", address="auto")
    assert Target.parse("cuda:1").with_executor("ray") == Target("ray", device="cuda")
    assert Target.parse("cuda:1").with_executor("local") == Target("cuda", index=1)
    with pytest.raises(TargetError, match="measures live"):
        Target.parse("replay:h100").with_executor("ray")


def test_spec_round_trips_through_json():
    spec = SearchSpec("L1/01_softmax", target="cuda:1", forecaster="roofline", generator="mutation",
                      method=MethodChoice("selective", k=2, m=3), budget=12, seed=5, max_seeds=2,
                      selector="islands", in_flight=2)
    stored = json.loads(json.dumps(spec.to_dict()))
    assert SearchSpec.from_dict(stored) == spec
    assert stored["target"]["kind"] == "cuda" and stored["method"] == {"name": "selective", "k": 2, "m": 3}


def test_replace_accepts_names_strings_and_dotted_fields():
    spec = SearchSpec("L1/01_softmax")
    other = spec.replace(target="cpu", method="selective", budget=8, **{"method.k": 2, "forecaster.adapt": False})
    assert other.target == Target("cpu") and other.budget == 8
    assert other.method == MethodChoice("selective", k=2, m=spec.method.m)
    assert other.forecaster.adapt is False and other.forecaster.name == spec.forecaster.name
    assert spec.budget != 8  # the original is unchanged
    with pytest.raises(ConfigError, match="no field"):
        spec.replace(colour="red")


def test_diff_names_every_differing_field():
    spec = SearchSpec("L1/01_softmax")
    other = spec.replace(budget=8, **{"method.k": 2})
    assert spec.diff(other) == {"budget": (40, 8), "method.k": (4, 2)}
    assert spec.diff(spec) == {}
    assert "method.k: 4 != 2" in spec.describe_diff(other)


@pytest.mark.parametrize("kwargs, words", [
    (dict(forecaster="oracle"), "unknown forecaster 'oracle'"),
    (dict(generator="gpt"), "unknown generator 'gpt'"),
    (dict(method="anneal"), "unknown method 'anneal'"),
    (dict(selector="greedy"), "unknown selector"),
    (dict(budget=0), "at least 1"),
    (dict(forecaster="none"), "needs a forecaster"),
    (dict(target="tpu"), "not understood"),
])
def test_bad_choices_are_refused_with_what_to_do(kwargs, words):
    with pytest.raises(ConfigError, match=words):
        SearchSpec("L1/01_softmax", **kwargs)


def test_a_stored_spec_with_unknown_fields_or_version_is_refused():
    d = SearchSpec("L1/01_softmax").to_dict()
    with pytest.raises(ConfigError, match="unknown fields"):
        SearchSpec.from_dict({**d, "temperature": 0.7})
    with pytest.raises(ConfigError, match="version 99"):
        SearchSpec.from_dict({**d, "version": 99})


def test_in_flight_takes_a_pipelined_setting_and_round_trips():
    s = SearchSpec("L1/01_softmax", in_flight="AUTO:6")
    assert s.in_flight == "auto:6"
    assert SearchSpec.from_dict(s.to_dict()) == s
    assert SearchSpec("L1/01_softmax", in_flight="3").in_flight == 3
    with pytest.raises(ConfigError, match="auto:N"):
        SearchSpec("L1/01_softmax", in_flight="many")


def _local_model_dir(root):
    """A folder that looks like a GGUF model directory and a PEFT adapter directory (files only:
    the spec checks paths, it loads nothing)."""
    model, adapter = root / "model", root / "adapter"
    model.mkdir()
    (model / "m.gguf").write_bytes(b"GGUF")
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    return model, adapter


def test_a_local_forecaster_choice_round_trips_with_absolute_paths(tmp_path, monkeypatch):
    model, adapter = _local_model_dir(tmp_path)
    monkeypatch.chdir(tmp_path)
    choice = ForecasterChoice("local", model="model", gguf_file="m.gguf", adapter="adapter", device="cuda:1")
    assert (choice.model, choice.adapter) == (str(model), str(adapter))  # stored absolute
    choice.check_files()
    spec = SearchSpec("L1/01_softmax", forecaster=choice)
    stored = json.loads(json.dumps(spec.to_dict()))
    assert stored["forecaster"] | {"reference_time": None, "adapt": None} == {
        "name": "local", "path": None, "reference_time": None, "adapt": None, "model": str(model),
        "gguf_file": "m.gguf", "adapter": str(adapter), "device": "cuda:1"}
    assert SearchSpec.from_dict(stored) == spec
    # a hub id is kept as given (not a path here)
    assert ForecasterChoice("local", model="HuggingFaceTB/SmolLM2-135M-Instruct").model == \
        "HuggingFaceTB/SmolLM2-135M-Instruct"
    # the device is where the model runs: a resume may change it, like the GPU index
    from workbench.compose import RESUMABLE_CHANGES

    moved = spec.replace(**{"forecaster.device": "cpu"})
    assert set(spec.diff(moved)) == {"forecaster.device"} <= RESUMABLE_CHANGES


@pytest.mark.parametrize("fields, message", [
    (dict(name="local", adapter="x"), "adapter is loaded on top of the model"),
    (dict(name="local"), "give the model too"),
    (dict(name="roofline", adapter="x"), "forecaster 'roofline' takes none"),
    (dict(name="learned", device="cuda"), "forecaster 'learned' takes none"),
    (dict(name="local", model="m", device="gpu0"), "cpu, cuda, cuda:N or mps"),
    (dict(name="local", model="m", gguf_file="sub/m.gguf"), "file name inside the model directory"),
])
def test_local_forecaster_combinations_are_refused_with_the_fix(fields, message):
    with pytest.raises(ConfigError, match=message):
        ForecasterChoice(**fields)


def test_local_forecaster_files_are_checked_with_the_front_ends_labels(tmp_path):
    model, adapter = _local_model_dir(tmp_path)
    cases = [
        (dict(model=str(tmp_path / "nope")), "--local-model '.*nope' does not exist"),
        (dict(model=str(model)), "no config.json.*give one as --gguf-file \\(m.gguf\\)"),
        (dict(model=str(model), gguf_file="other.gguf"), "'other.gguf' is not in .*holds m.gguf"),
        (dict(model=str(model / "m.gguf")), "is a file, not a model directory: give its folder"),
        (dict(model=str(model), gguf_file="m.gguf", adapter=str(tmp_path / "a.tar")), "unpack it first"),
        (dict(model=str(model), gguf_file="m.gguf", adapter=str(model)), "no adapter_config.json"),
    ]
    labels = {"model": "--local-model", "gguf_file": "--gguf-file", "adapter": "--adapter"}
    for fields, message in cases:
        with pytest.raises(ConfigError, match=message):
            ForecasterChoice("local", **fields).check_files(labels)
    # a choice whose files are gone still reads back (a stored search stays listable)
    gone = ForecasterChoice("local", model=str(tmp_path / "gone"), adapter=str(tmp_path / "gone-adapter"))
    assert SearchSpec.from_dict(SearchSpec("L1/01_softmax", forecaster=gone).to_dict()).forecaster == gone


def test_the_contract_is_part_of_the_spec(tmp_path):
    from workbench.commands.search import spec_from_args
    from workbench.cli import build_parser
    from workbench.problems.contract import Contract
    from workbench.store import Store

    spec = SearchSpec("L1/01_softmax", contract="fp16")
    assert spec.contract == Contract("fp16") and spec.contract.tolerance == "kernelbench"
    assert SearchSpec.from_dict(spec.to_dict()) == spec
    old = SearchSpec("L1/01_softmax").to_dict()
    del old["contract"]  # a spec stored before the field: the default contract
    assert SearchSpec.from_dict(old).contract == Contract()
    assert "contract.precision" in spec.diff(SearchSpec("L1/01_softmax"))
    args = build_parser().parse_args(["search", "--problem", "softmax", "--gpu", "cpu", "--precision", "fp32",
                                      "--tolerance", "legacy", "--trials", "5"])
    with Store(tmp_path / "db.sqlite") as store:
        got = spec_from_args(store, args)
    assert got.contract == Contract("fp32", "legacy", 5) and got.forecaster.name == "roofline"
