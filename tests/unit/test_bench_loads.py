"""The benchmarks that borrow the demo's recorded story can still load it.

bench/ is not run by the suite (it prints ratios, it asserts nothing); this keeps a change to
scripts/record_demo.py from breaking bench/session_growth.py unnoticed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_session_growth_finds_the_seed_story_and_its_planner() -> None:
    demo = _bench_module("session_growth").load_demo_script()
    story = demo.STORIES["seed-pair-deploy"]
    assert story.scenario == "seed-pair"
    assert callable(demo.plan_for) and callable(story.script)


@pytest.mark.slow
def test_the_ssh_benches_print_no_librarys_warning(tmp_path: Path) -> None:
    """bench/startup.py's output is its own lines: a library that warns as it loads (as
    asyncssh's cryptography does) after bench/ssh_fanout.py is imported stays off stderr."""
    (tmp_path / "noisy_library.py").write_text(
        "import warnings\nwarnings.warn('noisy_library is deprecated', DeprecationWarning)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}", "PYTHONWARNINGS": "default"}
    shown = subprocess.run(
        [sys.executable, "-c", "import bench.recon_floor, noisy_library; print('loaded')"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert shown.stdout == "loaded\n"
    assert shown.stderr == ""
