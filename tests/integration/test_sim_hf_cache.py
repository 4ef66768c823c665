"""The simulated hosts' HF cache folders and their `du`, run in the host's restricted shell."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sim.hostdir import materialize
from sim.scenario import load_scenario
from tools.recon.probe import split_sections
from tools.recon.probe_parse import facts_from_sections
from tools.recon.sections import HF_MODELS_COMMAND

MODEL_FOLDER = ".cache/huggingface/hub/models--Qwen--Qwen3.5-122B-A10B-FP8"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def host(tmp_path: Path, scenario: str = "seed-pair", name: str = "spark-a") -> Path:
    spec = load_scenario(scenario)
    return materialize(spec.hosts[name], spec.user, tmp_path / name)


def sh(host_dir: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(host_dir / "sandbox" / "launch"), command], capture_output=True, text=True, check=False
    )


def hf_models_facts(host_dir: Path) -> dict[str, int | None] | None:
    """The probe's hf-models section, run on the host, read back into facts."""
    script = (
        'echo "@@scout:section hf-models@@"\n'
        f"{{ {HF_MODELS_COMMAND} ; }} 2>&1\n"
        'echo "@@scout:status hf-models $?@@"'
    )
    result = sh(host_dir, script)
    facts = facts_from_sections("spark-a", split_sections(result.stdout), NOW)
    return facts.hf_cache.models


def test_cache_is_laid_out_as_hub_folders_without_weights(tmp_path: Path) -> None:
    folder = host(tmp_path) / "home" / MODEL_FOLDER
    assert (folder / "snapshots").is_dir() and (folder / "refs" / "main").is_file()
    # no weights: only config.json (sim/fakehost/model_configs.py) has bytes
    assert sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) < 2000


def test_du_reports_the_scenario_size_in_each_format(tmp_path: Path) -> None:
    host_dir = host(tmp_path)
    exact = sh(host_dir, f"du -sb {MODEL_FOLDER}")
    assert exact.stdout == f"119000000000\t{MODEL_FOLDER}\n" and exact.returncode == 0
    assert sh(host_dir, f"du -sh {MODEL_FOLDER}").stdout == f"111G\t{MODEL_FOLDER}\n"
    assert (
        sh(host_dir, f"du -s {MODEL_FOLDER}").stdout == f"116210940\t{MODEL_FOLDER}\n"
    )  # 4 KiB blocks, in KiB
    whole = sh(host_dir, "du -sb ~/.cache").stdout.split("\t")
    assert 119_000_000_000 < int(whole[0]) < 119_000_100_000
    assert whole[1] == f"{host_dir / 'home'}/.cache\n"


def test_du_lists_folders_children_first_with_a_total(tmp_path: Path) -> None:
    lines = sh(host(tmp_path), "du -c .cache").stdout.splitlines()
    assert [line.split("\t")[1] for line in lines] == [
        MODEL_FOLDER,
        ".cache/huggingface/hub",
        ".cache/huggingface",
        ".cache",
        "total",
    ]
    assert lines[-1].split("\t")[0] == lines[-2].split("\t")[0]


def test_du_small_folders_and_refusals(tmp_path: Path) -> None:
    host_dir = host(tmp_path)
    refs = sh(host_dir, f"du -sb {MODEL_FOLDER}/refs")
    assert int(refs.stdout.split("\t")[0]) < 10_000
    outside = sh(host_dir, "du -sb /etc ../../..")
    assert outside.returncode == 1 and outside.stdout == ""
    assert "du: cannot access '/etc': No such file or directory" in outside.stderr
    assert "du: cannot access '../../..': No such file or directory" in outside.stderr
    bad = sh(host_dir, "du -x .")
    assert bad.returncode == 1 and "du: invalid option -- 'x'" in bad.stderr


@pytest.mark.parametrize(
    ("scenario", "name", "expected"),
    [
        ("seed-pair", "spark-b", {"Qwen/Qwen3.5-122B-A10B-FP8": 119_000_000_000}),
        ("seed-pair-no-model", "spark-b", {}),
    ],
)
def test_probe_section_lists_the_cached_models(
    tmp_path: Path, scenario: str, name: str, expected: dict[str, int]
) -> None:
    assert hf_models_facts(host(tmp_path, scenario, name)) == expected


def test_without_du_the_models_are_listed_with_unknown_sizes(tmp_path: Path) -> None:
    host_dir = host(tmp_path)
    (host_dir / "bin" / "du").unlink()
    assert hf_models_facts(host_dir) == {"Qwen/Qwen3.5-122B-A10B-FP8": None}
