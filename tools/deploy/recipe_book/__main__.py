"""`python -m tools.deploy.recipe_book --write-docs` renders docs/playbook-flags.md from the
recipe data; `--check-docs` exits 1 when the file is stale."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.deploy.recipe_book.docs import render

DOCS = Path(__file__).resolve().parents[3] / "docs" / "playbook-flags.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.deploy.recipe_book")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write-docs", action="store_true", help=f"write {DOCS.name}")
    group.add_argument("--check-docs", action="store_true", help=f"exit 1 if {DOCS.name} is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.write_docs:
        DOCS.write_text(text, encoding="utf-8")
        print(f"wrote {DOCS}")
        return 0
    if DOCS.read_text(encoding="utf-8") != text:
        print(f"{DOCS} is stale: run python -m tools.deploy.recipe_book --write-docs")
        return 1
    print(f"{DOCS} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
