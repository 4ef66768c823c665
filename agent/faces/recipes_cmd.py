"""`scout recipes`: the serving recipes Scout can see, one shown as the commands it would run,
and a check of recipe files (Scout's format, or spark-vllm-docker's as its runner reads it).

`check` exits 0 when every file reads, else 1 with one line per file that does not; what Scout
cannot provide where it checks (a mod, an image to build) is a warning naming it, never a
refusal: the plan says the same and the operator decides.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_OK, EXIT_ERROR = 0, 1
DIR_HELP = (
    "a folder of recipe files, or a clone of spark-vllm-docker (its recipes/); may be repeated"
)


def add_recipes_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    recipes = sub.add_parser(
        "recipes",
        help="list, show and check serving recipes (Scout's and spark-vllm-docker's)",
        description="The recipes Scout can see: its bundled ones and the folders you name.",
    )
    actions = recipes.add_subparsers(dest="recipes_cmd", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        help="every recipe Scout can see, and where from",
        description="List Scout's bundled recipes, then those in each --dir folder (a "
        "spark-vllm-docker checkout or its recipes folder), each with its file.",
    )
    listing.add_argument("--dir", action="append", default=[], type=Path, help=DIR_HELP)
    listing.set_defaults(func=_list)
    show = actions.add_parser(
        "show",
        help="one recipe as the commands Scout would run",
        description="Show one recipe as Scout would run it on the named hosts: the image and "
        "how it arrives, the layout, the container's environment and files, the serve line.",
    )
    show.add_argument("name", help="a recipe's name, its file's name without .yaml, or a path")
    show.add_argument("--dir", action="append", default=[], type=Path, help=DIR_HELP)
    show.add_argument("--hosts", help="node names, head first, separated by commas")
    show.add_argument(
        "--inventory", type=Path, help="an inventory YAML: its hosts, in order, are the nodes"
    )
    show.set_defaults(func=_show)
    check = actions.add_parser(
        "check",
        help="read recipe files; exit 1 with one line per file that does not read",
        description="Read each recipe file (or every one in a folder) as its runner would; exit "
        "0 when all read, else 1 with one line per file and why. Warnings never fail it.",
    )
    check.add_argument("paths", nargs="+", type=Path, help="recipe files or folders")
    check.add_argument("-q", "--quiet", action="store_true", help="print only the failures")
    check.set_defaults(func=_check)


def _list(args: argparse.Namespace) -> int:
    from tools.deploy.recipe_book.catalog import visible

    failed = 0
    for entry in visible(args.dir):
        if entry.recipe is None:
            failed += 1
            print(f"[error] {entry.error}")
            continue
        recipe = entry.recipe
        size = "solo" if recipe.max_nodes == 1 else f"{recipe.min_nodes}+ nodes"
        image = recipe.image.ref if recipe.image else "the engine's default image"
        print(f"{recipe.name}  {', '.join(recipe.models)}  {recipe.engine}  {size}  {image}")
        print(f"    {entry.path}")
    return EXIT_ERROR if failed else EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from tools.deploy.launch.preview import preview
    from tools.deploy.launch.topology import TopologyRefusal
    from tools.deploy.recipe_book.catalog import find

    found = find(args.name, args.dir)
    if len(found) != 1:
        where = "; ".join(e.path for e in found)
        why = (
            f"{len(found)} recipes are called {args.name} ({where}): give its path"
            if found
            else (f"no recipe called {args.name} (see scout recipes list)")
        )
        print(f"scout recipes show: {why}", file=sys.stderr)
        return EXIT_ERROR
    entry = found[0]
    if entry.recipe is None:
        print(f"scout recipes show: {entry.error}", file=sys.stderr)
        return EXIT_ERROR
    hosts = [h.strip() for h in args.hosts.split(",") if h.strip()] if args.hosts else None
    if args.inventory is not None and hosts is None:
        from tools.ssh.errors import InventoryError
        from tools.ssh.inventory import Inventory

        try:
            hosts = Inventory.load(args.inventory).names()
        except InventoryError as exc:
            print(f"scout recipes show: {exc}", file=sys.stderr)
            return EXIT_ERROR
    try:
        print("\n".join(preview(entry.recipe, hosts)))
    except TopologyRefusal as exc:
        print(f"scout recipes show: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from tools.deploy.recipe_book.catalog import entries

    found = entries(args.paths)
    bad = [e for e in found if e.recipe is None and e.skipped is None]
    for entry in found:
        if entry.skipped is not None:
            print(f"[skip] {entry.skipped}")
        elif entry.recipe is None:
            print(f"[error] {entry.error}")
        elif not args.quiet:
            runner = f" (run as {entry.recipe.runner}'s)" if entry.recipe.runner else ""
            print(f"[ok] {entry.path}: {entry.recipe.name}{runner}")
            for warning in entry.warnings:
                print(f"  [warning] {warning}")
    skipped = sum(e.skipped is not None for e in found)
    served = f" ({skipped} for a runtime Scout does not serve)" if skipped else ""
    print(f"{len(found) - len(bad)} of {len(found)} recipe files read{served}")
    return EXIT_ERROR if bad or not found else EXIT_OK
