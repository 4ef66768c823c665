"""`du`: sizes of folders in the host folder; HF cache model folders weigh what the scenario says.

Supports `-s`, `-b`/`--apparent-size`, `-h`, `-k`, `-m`, `-B SIZE`, `-c`; paths outside the host
folder are answered like paths that do not exist, as `cat` does.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .hfcache import weight_bytes
from .units import human_df

_SHORT = "sbhkmc"
_LONG = {
    "--summarize": "s",
    "--bytes": "b",
    "--human-readable": "h",
    "--total": "c",
}
_SUFFIX = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


class UsageError(Exception):
    """An option du does not know; the message is GNU du's."""


@dataclass
class Options:
    summarize: bool = False
    apparent: bool = False
    human: bool = False
    block: int = 1024
    total: bool = False


def run_du(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    try:
        options, paths = _parse(args)
    except UsageError as exc:
        sys.stderr.write(f"du: {exc}\nTry 'du --help' for more information.\n")
        return 1
    sizer = _Sizer(weight_bytes(state, host_dir / "home"), options.apparent)
    code, grand = 0, 0
    for arg in paths or ["."]:
        target = _inside(arg, host_dir)
        if target is None:
            sys.stderr.write(f"du: cannot access '{arg}': No such file or directory\n")
            code = 1
            continue
        rows = sizer.rows(target, arg)
        for size, shown in rows if not options.summarize else rows[-1:]:
            print(f"{_show(size, options)}\t{shown}")
        grand += rows[-1][0]
    if options.total:
        print(f"{_show(grand, options)}\ttotal")
    return code


def _parse(args: list[str]) -> tuple[Options, list[str]]:
    options, paths = Options(), []
    words = iter(args)
    for arg in words:
        if arg == "--apparent-size":
            options.apparent = True
        elif arg in _LONG:
            _set(options, _LONG[arg])
        elif arg.startswith("--block-size="):
            options.block = _block(arg.split("=", 1)[1])
        elif arg.startswith("--"):
            raise UsageError(f"unrecognized option '{arg}'")
        elif arg.startswith("-") and len(arg) > 1:
            letters, _, size = arg[1:].partition("B")
            for letter in letters:
                if letter not in _SHORT:
                    raise UsageError(f"invalid option -- '{letter}'")
                _set(options, letter)
            if "B" in arg:
                options.block = _block(size or next(words, ""))
        else:
            paths.append(arg)
    return options, paths


def _set(options: Options, letter: str) -> None:
    if letter == "s":
        options.summarize = True
    elif letter == "b":
        options.apparent, options.block = True, 1
    elif letter == "h":
        options.human = True
    elif letter == "k":
        options.block = 1024
    elif letter == "m":
        options.block = 1024**2
    elif letter == "c":
        options.total = True


def _block(text: str) -> int:
    number, suffix = text.rstrip("KMGTkmgt"), text[len(text.rstrip("KMGTkmgt")) :].upper()
    if not (number or suffix) or (number and not number.isdigit()) or len(suffix) > 1:
        raise UsageError(f"invalid -B argument '{text}'")
    return int(number or 1) * _SUFFIX[suffix]


def _inside(arg: str, host_dir: Path) -> Path | None:
    target = (host_dir / "home" / arg).resolve()
    if not target.is_relative_to(host_dir.resolve()) or not target.exists():
        return None
    return target


def _show(size: int, options: Options) -> str:
    if options.human:
        return human_df(size / 1024) if size else "0"
    return str(math.ceil(size / options.block))


class _Sizer:
    """Sizes in bytes (apparent, or 512-byte blocks as allocated); model folders from the state."""

    def __init__(self, weights: dict[Path, int], apparent: bool) -> None:
        self.weights = weights
        self.apparent = apparent

    def rows(self, target: Path, shown: str) -> list[tuple[int, str]]:
        """(size, path) for every folder under `target`, children first, `target` last."""
        if target in self.weights:
            return [(self._weight(target), shown)]
        if not target.is_dir() or target.is_symlink():
            return [(self._entry(target), shown)]
        rows: list[tuple[int, str]] = []
        size = self._entry(target)
        for child in sorted(target.iterdir()):
            child_rows = self.rows(child, f"{shown.rstrip('/')}/{child.name}")
            if child.is_dir() and not child.is_symlink():
                rows += child_rows
            size += child_rows[-1][0]
        return [*rows, (size, shown)]

    def _weight(self, folder: Path) -> int:
        stated = self.weights[folder]
        return stated if self.apparent else -(-stated // 4096) * 4096

    def _entry(self, path: Path) -> int:
        info = os.lstat(path)
        return info.st_size if self.apparent else info.st_blocks * 512
