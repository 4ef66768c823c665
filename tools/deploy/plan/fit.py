"""Does the model fit: weight size (Hub API, index file or a host's HF cache) against each chosen
node's memory, as a verdict with its numbers.

Which nodes and how the model is split is the layout chooser's (tools/checks/layout.py); what a
node can give is tools/checks/budget.py's. The arithmetic is pure; looking the size up takes an
injected `fetch` so tests serve the Hub's answers from a local server.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tools.checks import GB, Finding
from tools.checks.budget import NodeBudget
from tools.checks.fit_rule import Demand, NodeFit, fit_on
from tools.recon.parsers.disk import parse_du_sb

Fetch = Callable[[str], Awaitable[bytes]]
HUB_URL = "https://huggingface.co"
HEX = frozenset("0123456789abcdef")
DEFAULT_HF_CACHE = "~/.cache/huggingface"  # the folder recon lists (`hf_cache` facts)


class ModelSizeError(Exception):
    """The size could not be found; the message says where it looked and what to do."""


def gb(value: float) -> str:
    """Bytes as decimal gigabytes to a tenth, for the fit arithmetic ("59.5 GB per node")."""
    return f"{value / GB:.1f} GB"


@dataclass
class FitVerdict:
    """The fit rule's verdicts on the chosen nodes, in words; `fits`: on every node now."""

    fits: bool
    size_bytes: int
    per_node_bytes: float
    lines: list[str] = field(default_factory=list)
    blocking_containers: dict[str, list[str]] = field(default_factory=dict)
    verdicts: tuple[NodeFit, ...] = ()

    @property
    def message(self) -> str:
        return "; ".join(self.lines)

    def finding(self) -> Finding:
        """Preflight's memory line: ok, or a blocker saying what would make it fit."""
        claims = [v.claim() for v in self.verdicts]
        if self.fits:
            return Finding(
                severity="ok",
                check="memory",
                kind="model_fits",
                hosts=[],
                message=self.message,
                fit=claims,
            )
        holders = sorted({c for names in self.blocking_containers.values() for c in names})
        fix = (
            f"stop {', '.join(holders)}"
            if holders
            else "use more nodes or a smaller (quantised) model"
        )
        return Finding(
            severity="blocker",
            check="memory",
            kind="model_does_not_fit",
            hosts=sorted(self.blocking_containers),
            message=self.message,
            fix=fix,
            fit=claims,
        )


def check_fit(
    size_bytes: int, budgets: list[NodeBudget], utilization: float, context_kv_bytes: float = 0.0
) -> FitVerdict:
    """The fit rule (tools/checks/fit_rule.py) on each node, as the layout chooser asks it, in
    words: weights split evenly over the nodes plus the headroom beside them."""
    nodes = len(budgets)
    share = size_bytes / nodes
    demand = Demand(size_bytes, context_kv_bytes)
    verdicts = tuple(fit_on(node, demand, nodes, utilization) for node in budgets)
    verdict = FitVerdict(True, size_bytes, share, verdicts=verdicts)
    verdict.lines.append(
        f"{gb(size_bytes)} over {nodes} node{'s' * (nodes > 1)} = {gb(share)} per node"
    )
    for node, said in zip(budgets, verdicts, strict=True):
        usable = said.usable_now
        if said.state == "fits":
            verdict.lines.append(f"{node.host}: {_usable_words(node, utilization, usable, share)}")
            continue
        verdict.fits = False
        holders = ", ".join(said.freeing)
        line = f"{node.host} has {gb(node.available_bytes)} available"
        if holders:
            line += f" while {holders} run{'s' * (len(node.holders) == 1)}"
        line += f" (needs {gb(share)} + {_headroom_words(said)} at utilization {utilization:g})"
        if said.state == "fits_once_stopped":
            verb = "is" if len(node.holders) == 1 else "are"
            line += f" → does not fit until {holders} {verb} stopped"
            verdict.blocking_containers[node.host] = [name for name, _ in node.holders]
        else:
            line += " → does not fit on this node"
        verdict.lines.append(line)
    return verdict


def _headroom_words(said: NodeFit) -> str:
    """What the headroom beside the weights is for: the KV of the context asked, if one is."""
    if not said.demand.context_kv_bytes:
        return "KV headroom"
    return f"{gb(said.need.headroom)} for one sequence of the context asked and activations"


def _usable_words(node: NodeBudget, utilization: float, usable: float, share: float) -> str:
    """How the usable bytes come about: unified memory counts what CUDA can allocate."""
    left = f"{gb(usable - share)} left for KV cache"
    if not node.unified or node.total_bytes is None:
        return f"{gb(node.available_bytes)} available × {utilization:g} = {gb(usable)}, {left}"
    return (
        f"{utilization:g} × {gb(node.total_bytes)} unified = {gb(usable)} (CUDA can allocate "
        f"{gb(node.allocatable())} of {gb(node.available_bytes)} available), {left}"
    )


@dataclass(frozen=True)
class HubWeights:
    """What the Hub says of a model: its weights' bytes and, from the API's model info, `sha`,
    the commit its main branch is at ("Repo SHA at this particular revision", huggingface_hub's
    ModelInfo). None when only the index file answered."""

    size_bytes: int
    revision: str | None = None


async def size_from_hub(model: str, fetch: Fetch, hub_url: str = HUB_URL) -> HubWeights:
    """Sum of the *.safetensors sizes the Hub API lists (with the API's `sha`), else the index
    file's total_size."""
    problems = []
    try:
        api = json.loads(await fetch(f"{hub_url}/api/models/{model}?blobs=true"))
        sizes = [
            s.get("size")
            for s in api.get("siblings", [])
            if str(s.get("rfilename", "")).endswith(".safetensors")
        ]
        if sizes and all(isinstance(s, int) for s in sizes):
            sha = api.get("sha")
            return HubWeights(sum(sizes), sha if _is_commit(sha) else None)
        problems.append("the Hub API listed no .safetensors sizes")
    except (ValueError, AttributeError) as exc:
        problems.append(f"the Hub API answer was unreadable ({exc})")
    except Exception as exc:
        problems.append(f"the Hub API failed: {exc}")
    try:
        index = json.loads(
            await fetch(f"{hub_url}/{model}/resolve/main/model.safetensors.index.json")
        )
        total = index.get("metadata", {}).get("total_size")
        if isinstance(total, int):
            return HubWeights(total)
        problems.append("model.safetensors.index.json has no metadata.total_size")
    except Exception as exc:
        problems.append(f"model.safetensors.index.json failed: {exc}")
    raise ModelSizeError(
        f"could not find the size of {model}: {'; '.join(problems)}. Check the model id, or give "
        "the size (model_size_gb) or run `du -sb` on a host's HF cache copy."
    )


def _is_commit(value: object) -> bool:
    """A full commit id: 40 hex characters, as the Hub cache's refs/main holds."""
    return isinstance(value, str) and len(value) == 40 and all(c in HEX for c in value)


def cache_dir(model: str, hf_cache: str = DEFAULT_HF_CACHE) -> str:
    """Where the Hub client keeps a model: hub/models--ORG--NAME."""
    return f"{hf_cache}/hub/models--{model.replace('/', '--')}"


def du_command(model: str, hf_cache: str = DEFAULT_HF_CACHE) -> str:
    return f"du -sb {cache_dir(model, hf_cache)}"


def size_from_du(output: str) -> int | None:
    """Bytes from `du -sb` output ("123456\tpath"), None when du printed no total."""
    rows = parse_du_sb(output)
    return rows[0].size_bytes if rows else None
