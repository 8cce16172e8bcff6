"""The dataset registry file and its loader; data-dir resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from heta_eval.data import locate
from heta_eval.data.locate import DatasetNotFoundError, dataset_dir, find_dataset, resolve_data_root
from heta_eval.data.registry import REGISTRY_PATH, RegistryError, get_dataset, list_datasets

BEIR_README_MD5 = {
    "msmarco": "444067daf65d982533ea17ebd59501e4",
    "trec-covid": "ce62140cb23feb9becf6270d0d1fe6d1",
    "nfcorpus": "a89dba18a62ef92f7d323ec890a0d38d",
    "nq": "d4d3d2e48787a744b6f6e691ff534307",
    "hotpotqa": "f412724f78b0d91183a0e86805e16114",
    "fiqa": "17918ed23cd04fb15047f73e6c3bd9d9",
    "arguana": "8ad3e3c2a5867cdced806d6503f29b99",
    "webis-touche2020": "46f650ba5a527fc69e0a6521c5a23563",
    "cqadupstack": "4e41456d7df8ee7760a7f866133bda78",
    "quora": "18fb154900ba42a600f84b839c173167",
    "dbpedia-entity": "c2a39eb420a3164af735795df012ac2c",
    "scidocs": "38121350fc3a4d2f48850f6aff52e4a9",
    "fever": "5a818580227bfb4b35bb6fa46d9b6c03",
    "climate-fever": "8b66f0a9126c521bae2bde127b4dc99d",
    "scifact": "5f7d1de60b170fc8027bb7898e2efca1",
}


def test_every_downloadable_beir_dataset_with_readme_md5():
    entries = {info.name: info for info in list_datasets()}
    for name, md5 in BEIR_README_MD5.items():
        info = entries[name]
        assert info.md5 == md5
        assert (
            info.url
            == f"https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{name}.zip"
        )
        assert info.ignore_identical_ids is True
        assert info.queries and info.corpus
        assert info.split == ("dev" if name == "msmarco" else "test")
    # md5.csv's wrong rows are not used.
    assert entries["fever"].md5 != entries["scifact"].md5
    assert not entries["webis-touche2020"].md5.startswith("6e29ac6c")


def test_counts_and_cqadupstack_policy():
    assert (get_dataset("scifact").queries, get_dataset("scifact").corpus) == (300, 5183)
    assert (get_dataset("msmarco").queries, get_dataset("msmarco").corpus) == (6980, 8841823)
    cqa = get_dataset("cqadupstack")
    assert cqa.aggregate == "mean" and len(cqa.subsets) == 12
    subs = [get_dataset(f"cqadupstack/{s}") for s in cqa.subsets]
    assert sum(s.queries for s in subs) == cqa.queries == 13145
    assert sum(s.corpus for s in subs) == cqa.corpus == 457199
    assert get_dataset("cqadupstack/tex").parent == "cqadupstack"
    assert get_dataset("cqadupstack/tex").archive_name == "cqadupstack.zip"
    beir = [e for e in list_datasets(include_subsets=True) if e.adapter == "beir"]
    assert len(beir) == 15 + 12
    assert get_dataset("scifact-claims").adapter == "scifact-claims"


def test_registry_ships_inside_the_package_as_data():
    from importlib import resources

    bundled = resources.files("heta_eval.data").joinpath("registry.json")
    assert Path(str(bundled)) == REGISTRY_PATH
    assert json.loads(bundled.read_text(encoding="utf-8"))["datasets"]["scifact"]


def test_unknown_dataset_lists_known_ones():
    with pytest.raises(RegistryError, match=r"unknown dataset 'scifakt'.*scifact"):
        get_dataset("scifakt")


def write_registry(tmp_path: Path, datasets: dict) -> Path:
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"schema_version": 1, "datasets": datasets}), encoding="utf-8")
    return path


def test_null_md5_and_custom_entries_are_allowed(tmp_path, monkeypatch):
    path = write_registry(
        tmp_path,
        {
            "scifact-claims": {
                "kind": "custom",
                "url": "https://example.org/c.zip",
                "md5": None,
                "split": "dev",
                "queries": 300,
                "corpus": 5183,
            }
        },
    )
    monkeypatch.setenv("HETA_EVAL_REGISTRY", str(path))
    info = get_dataset("scifact-claims")
    assert info.md5 is None and info.kind == "custom"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"kind": "beir", "url": "u", "md5": "XYZ", "split": "test"}, "md5"),
        ({"kind": "other", "url": "u", "md5": None, "split": "test"}, "kind"),
        ({"kind": "beir", "url": "u", "md5": None}, "lacks 'split'"),
        (
            {
                "kind": "beir",
                "url": "u",
                "md5": None,
                "split": "test",
                "policy": {"aggregate": "mean"},
            },
            "needs 'subsets'",
        ),
    ],
)
def test_malformed_registry_entries_are_rejected(tmp_path, monkeypatch, entry, message):
    monkeypatch.setenv("HETA_EVAL_REGISTRY", str(write_registry(tmp_path, {"x": entry})))
    with pytest.raises(RegistryError, match=message):
        get_dataset("x")


def test_invalid_registry_json(tmp_path, monkeypatch):
    path = tmp_path / "registry.json"
    path.write_text("{not json", encoding="utf-8")
    monkeypatch.setenv("HETA_EVAL_REGISTRY", str(path))
    with pytest.raises(RegistryError, match="invalid JSON"):
        list_datasets()


# ---------------------------------------------------------------- data dir resolution


def test_data_dir_resolution_order(tmp_path, monkeypatch):
    monkeypatch.delenv("HETA_EVAL_DATA", raising=False)
    assert resolve_data_root() == locate.default_cache_dir()
    assert locate.default_cache_dir() == locate._REPO_CACHE
    assert locate._REPO_CACHE.parts[-2:] == ("datasets", "cache")
    monkeypatch.setenv("HETA_EVAL_DATA", str(tmp_path / "env"))
    assert resolve_data_root() == tmp_path / "env"
    assert resolve_data_root(tmp_path / "explicit") == tmp_path / "explicit"
    assert dataset_dir("scifact") == tmp_path / "env" / "scifact"


def test_cache_falls_back_to_the_cache_roots_datasets_folder_when_repo_is_not_writable(
    monkeypatch, tmp_path
):
    monkeypatch.delenv("HETA_EVAL_DATA", raising=False)
    monkeypatch.setattr(locate, "_writable", lambda path: False)
    monkeypatch.delenv("HETA_EVAL_CACHE_DIR", raising=False)
    assert resolve_data_root() == Path.home() / ".cache" / "heta-eval" / "datasets"
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    assert resolve_data_root() == tmp_path / "datasets"


def test_data_dir_may_be_the_dataset_folder_itself(scifact_dir):
    assert find_dataset("scifact", scifact_dir) == scifact_dir
    assert find_dataset("scifact", scifact_dir.parent) == scifact_dir


def test_env_var_gives_real_scifact(scifact_dir, monkeypatch):
    monkeypatch.setenv("HETA_EVAL_DATA", str(scifact_dir.parent))
    assert find_dataset("scifact") == scifact_dir


def test_missing_dataset_says_how_to_get_it(tmp_path):
    with pytest.raises(DatasetNotFoundError) as info:
        find_dataset("scifact", tmp_path)
    message = str(info.value)
    assert "heta-eval datasets download scifact" in message
    assert "HETA_EVAL_DATA" in message
    assert "thakur/BEIR/datasets/scifact.zip" in message
