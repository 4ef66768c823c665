"""A community recipe's `mods`, read from the repository around the recipe file.

spark-vllm-docker's runner hands each mod (`mods/NAME`, relative to the folder of its
`run-recipe.py`) to `launch-cluster.sh --apply-mod`, which copies the folder into every container
and runs its `run.sh` there with `WORKSPACE_DIR` set to the container's working directory, the
one the serve command then starts in. Scout can do what a mod does when all its `run.sh` does is
copy files of its own folder into that directory (a chat template the recipe then names:
`--chat-template unsloth.jinja`): Scout writes the same files into the same directory. A mod
that patches the engine (`patch`, `git apply`, a download, a background loop) Scout cannot
apply; a flag naming a file such a mod, or a mod Scout cannot read, would create is dropped,
with the reason, rather than left to stop vLLM at start. So is a flag such a mod adds to the
engine: one its script holds as a string of its own (`"--gpu-memory-utilization-gb"`, the
argument it registers with vLLM's parser).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

RUNNER_SCRIPT = "run-recipe.py"
# lines of a run.sh that change nothing in the container: options, messages, and variables set
# without running a command (`$(…)` or backticks run one)
_INERT = re.compile(
    r"^(#.*|set\s+[-+][a-z]+(\s+-?o?\s*\w+)*|echo\s.*|echo"
    r"|[A-Za-z_][A-Za-z0-9_]*=(?!.*(\$\(|`))\S.*)$"
)
# `cp chat_template.jinja $WORKSPACE_DIR/unsloth.jinja` (the variable braced or quoted, or not)
_COPY = re.compile(r'^cp\s+"?(?P<src>[\w.-]+)"?\s+"?\$\{?WORKSPACE_DIR\}?/(?P<dst>[\w.-]+)"?$')
# a relative file a flag names, that the runner's working directory must hold
_FILE_KINDS = ("jinja", "json", "yaml", "yml", "py", "txt", "sh", "tiktoken")
WORKSPACE_FILE = re.compile(r"^[A-Za-z0-9_][\w.-]*\.(" + "|".join(_FILE_KINDS) + r")$")


@dataclass(frozen=True)
class ModFile:
    """A file a mod puts in the working directory: its name there, its text, where from."""

    name: str
    text: str
    source: str


@dataclass
class ModReading:
    """What Scout makes of a recipe's mods: files it writes itself, and lines for the plan
    about the mods it cannot apply (each naming the mod and why)."""

    files: list[ModFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    mentions: dict[str, str] = field(default_factory=dict)  # file name → the mod that creates it
    flags: dict[str, str] = field(default_factory=dict)  # flag → the unapplied mod adding it


def repository_of(recipe_path: Path) -> Path | None:
    """The folder of the runner that would run this recipe: the nearest ancestor holding
    `run-recipe.py` (the runner resolves every mod against it)."""
    for folder in recipe_path.resolve().parents:
        if (folder / RUNNER_SCRIPT).is_file():
            return folder
    return None


def read_mods(
    mods: list[str],
    recipe_path: Path | None,
    locate: Callable[[str], Path | None] | None = None,
) -> ModReading:
    """Each mod classified: applied by Scout (files), or a warning naming it and why not.
    `locate`: another runner's way to find a mod's folder (sparkrun's registries); by default
    the folder named by the mod in the spark-vllm-docker repository around the recipe."""
    reading = ModReading()
    root = repository_of(recipe_path) if recipe_path is not None else None
    for mod in mods:
        if locate is not None:
            folder = locate(mod)
            where = "not next to the recipe, in its registry's mods, nor in sparkrun's "
            where += "registries cached on this machine"
        else:
            folder = root / mod if root is not None else None
            where = f"not in {root}" if root is not None else "no spark-vllm-docker checkout "
            where += "" if root is not None else "around the recipe"
        script = folder / "run.sh" if folder is not None else None
        if folder is None or script is None or not script.is_file():
            reading.warnings.append(f"mod `{mod}`: not found ({where}); not applied by Scout")
            continue
        text = script.read_text(encoding="utf-8", errors="replace")
        copies, other = _copies(text)
        for dst in _destinations(text):
            reading.mentions[dst] = mod
        if other or not copies:
            for flag in re.findall(r"[\"'](--[a-z0-9][a-z0-9-]*)[\"']", text):
                reading.flags[flag] = mod
            what = other[0] if other else "nothing Scout can repeat"
            reading.warnings.append(
                f"mod `{mod}`: does more than copy its files into the container (`{what}`); "
                "not applied by Scout"
            )
            continue
        for src, dst in copies:
            source = folder / src
            if not source.is_file():
                reading.warnings.append(f"mod `{mod}`: its file {src} is missing; not applied")
                break
            reading.files.append(
                ModFile(dst, source.read_text(encoding="utf-8"), f"mod `{mod}` ({src})")
            )
    return reading


def _copies(script: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The run.sh's copies into the working directory, and its first other command."""
    copies, other = [], []
    for raw in script.splitlines()[1:] if script.startswith("#!") else script.splitlines():
        line = raw.strip()
        if not line or _INERT.match(line):
            continue
        if match := _COPY.match(line):
            copies.append((match["src"], match["dst"]))
        else:
            other.append(line)
    return copies, other


def _destinations(script: str) -> set[str]:
    """File names the script mentions (copied, downloaded or written into the working
    directory), so a flag naming one is known to depend on this mod."""
    return set(re.findall(r"([A-Za-z0-9_][\w.-]*\.(?:" + "|".join(_FILE_KINDS) + r"))\b", script))
