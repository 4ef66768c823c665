"""No module of Scout's own code runs past 400 lines: past that a module holds more than one
concept, and a newcomer reads it as several. Generated tables pack their data to stay inside."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 400
TOPS = ("agent", "tools", "sim", "bench", "scripts")


def too_long(root: Path) -> list[str]:
    """Each module under root's code folders longer than the limit, with its line count."""
    counts = {
        path: len(path.read_text(encoding="utf-8").splitlines())
        for top in TOPS
        for path in (root / top).rglob("*.py")
    }
    return [f"{path.relative_to(root)}: {n}" for path, n in counts.items() if n > LIMIT]


def test_a_module_one_line_over_the_limit_is_named(tmp_path: Path) -> None:
    (tmp_path / "tools" / "deep").mkdir(parents=True)
    (tmp_path / "tools" / "deep" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "tools" / "short.py").write_text("x = 1\n" * LIMIT)
    assert too_long(tmp_path) == [f"tools/deep/long.py: {LIMIT + 1}"]


def test_no_module_of_the_product_is_over_the_limit() -> None:
    assert too_long(ROOT) == []
