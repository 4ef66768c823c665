"""Which nodes a model runs on and how it is split across them: the fewest nodes that hold it,
tensor parallelism (TP) within a node's GPUs, TP or pipeline parallelism (PP) across nodes.

The head (the first node given) always serves, so it is always in the set; nodes with another
GPU count than the head's are not mixed in; the others are taken in this order: those that fit
without stopping anything, those that share a fabric subnet with every node already taken, then
inventory order. A node's usable memory comes from tools/checks/budget.py; this module only
compares it with each node's share of the weights.

How the split is chosen, and where that comes from:
- several GPUs per node: TP = the node's GPUs, PP = the number of nodes (vLLM,
  docs/serving/parallelism_scaling.md: "set tensor_parallel_size to the number of GPUs per node
  and pipeline_parallel_size to the number of nodes", e.g. TP=8 × PP=2 on two 8-GPU nodes);
  only activations between stages cross the fabric, not every layer's all-reduce. TP over all
  GPUs (SGLang's two-node example runs `--tp 16 --nnodes 2`) is used when asked.
- one GPU per node (a DGX Spark): TP across the nodes, as NVIDIA's playbooks run vLLM (TP=2 on
  two Sparks, TP=4 through a switch; docs/sources.md §2.3). A TP size must divide the
  model's attention heads, a power of two in the models served here [U: the engine checks it at
  start], so an odd count of nodes runs as pipeline stages (3 nodes: TP=1 × PP=3).
Every recipe can do both across nodes: vLLM with Ray or with `--nnodes/--node-rank` (mp),
docs/sources.md §4; SGLang `--tp/--nnodes/--node-rank` (§5) and `--pp-size`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tools.checks.budget import DEFAULT_UTILIZATION, NodeBudget
from tools.checks.fabric import PairLink
from tools.world.findings import gb

KV_HEADROOM_FRACTION = 0.10  # of a node's weights, kept free for KV cache and activations
Links = Callable[[str, str], PairLink]
_LINK_RANK = {"up": 0, "unknown": 1, "none": 2}


class LayoutError(Exception):
    """The layout asked for is impossible as given; the message says why and what would work."""


@dataclass(frozen=True)
class LayoutRequest:
    """What the layout must hold, and what the user fixed (None: the chooser decides)."""

    size_bytes: int
    utilization: float = DEFAULT_UTILIZATION
    nodes: int | None = None
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    pipeline_ok: bool = True  # the engine can place pipeline stages on different nodes


@dataclass(frozen=True)
class Layout:
    """The chosen nodes (head first), the split, and why; `short` names nodes that cannot hold
    their share even with their containers stopped (then the layout does not fit)."""

    hosts: tuple[str, ...]
    tensor_parallel: int
    pipeline_parallel: int
    gpus_per_node: int
    share_bytes: float
    need_bytes: float
    of_nodes: int
    why_nodes: str
    why_split: str
    stops: dict[str, list[str]] = field(default_factory=dict)
    short: tuple[str, ...] = ()

    @property
    def fits(self) -> bool:
        return not self.short

    @property
    def label(self) -> str:
        """`TP=2`, or `TP=8 × PP=2` when there are pipeline stages."""
        tp = f"TP={self.tensor_parallel}"
        return tp if self.pipeline_parallel == 1 else f"{tp} × PP={self.pipeline_parallel}"

    @property
    def reason(self) -> str:
        return f"{self.why_nodes}; {self.label}: {self.why_split}"

    @property
    def chose_subset(self) -> bool:
        return len(self.hosts) < self.of_nodes


def need_per_node(size_bytes: int, nodes: int) -> float:
    """A node's share of the weights plus the KV headroom it must keep free."""
    return size_bytes / nodes * (1 + KV_HEADROOM_FRACTION)


def choose_layout(request: LayoutRequest, budgets: Sequence[NodeBudget], links: Links) -> Layout:
    """The layout for `request` over `budgets` (head first); raises LayoutError when the sizes
    asked for contradict each other or the hosts given."""
    if not budgets:
        raise LayoutError("no node reported its memory: run recon on the hosts first")
    links = _remembered(links)
    gpus = budgets[0].gpus
    alike = [budgets[0], *(b for b in budgets[1:] if b.gpus == gpus)]  # never mixed shapes
    counts = _node_counts(request, len(alike), gpus)
    for count in counts:
        need = need_per_node(request.size_bytes, count)
        chosen = _pick(alike, count, need, request.utilization, links, fitting=True)
        if chosen is not None:
            return _layout(request, budgets, chosen, links)
    chosen = _pick(alike, counts[-1], 0.0, request.utilization, links, fitting=False)
    assert chosen is not None  # without the fit condition every count up to len(alike) works
    return _layout(request, budgets, chosen, links)


def _node_counts(request: LayoutRequest, available: int, gpus: int) -> list[int]:
    wanted = request.nodes
    if request.tensor_parallel or request.pipeline_parallel:
        world = (request.tensor_parallel or gpus) * (request.pipeline_parallel or 1)
        if world % gpus:
            raise LayoutError(
                f"TP×PP = {world} GPUs is not a whole number of {gpus}-GPU nodes; choose sizes "
                f"whose product is a multiple of {gpus}"
            )
        if wanted is not None and wanted != world // gpus:
            raise LayoutError(
                f"TP×PP = {world} GPUs fills {world // gpus} node(s) of {gpus} GPUs, not the "
                f"{wanted} asked for; leave one of them unset"
            )
        wanted = world // gpus
    if wanted is not None:
        if wanted > available:
            raise LayoutError(
                f"{wanted} nodes asked for, but only {available} hosts with {gpus} GPU(s) each "
                "(like the head) can serve"
            )
        return [wanted]
    return list(range(1, available + 1))


def _pick(
    budgets: Sequence[NodeBudget],
    count: int,
    need: float,
    utilization: float,
    links: Links,
    *,
    fitting: bool,
) -> list[NodeBudget] | None:
    """The head plus the best `count - 1` others; with `fitting`, only nodes that can hold
    `need` (once their containers stop); None if there are not enough of them."""
    head, *others = budgets

    def holds(node: NodeBudget) -> bool:
        return not fitting or node.usable_freed(utilization) >= need

    if not holds(head):
        return None
    chosen = [head]
    pool = [n for n in others if holds(n)]
    if len(pool) < count - 1:
        return None
    position = {n.host: i for i, n in enumerate(others)}
    while len(chosen) < count and pool:

        def preference(node: NodeBudget) -> tuple[bool, bool, int, int]:
            meshed = all(links(c.host, node.host).state == "up" for c in chosen)
            return (
                node.usable(utilization) < need,
                not meshed,
                _LINK_RANK[links(head.host, node.host).state],
                position[node.host],
            )

        best = min(pool, key=preference)
        chosen.append(best)
        pool.remove(best)
    return chosen if len(chosen) == count else None


def _remembered(links: Links) -> Links:
    """`links` asked once per pair: the greedy pick asks about the same pairs again and again."""
    seen: dict[frozenset[str], PairLink] = {}

    def remembered(a: str, b: str) -> PairLink:
        key = frozenset((a, b))
        if key not in seen:
            seen[key] = links(a, b)
        return seen[key]

    return remembered


def _split(request: LayoutRequest, count: int, node: NodeBudget) -> tuple[int, int, str]:
    """(TP, PP, why) for `count` nodes shaped like `node` (its GPUs and how they are linked)."""
    tp, pp, why = _split_gpus(request, count, node.gpus)
    if node.gpu_link and node.gpus > 1 and tp > 1:
        why += f"; within a node: {node.gpu_link}"
        if node.pcie_only:
            why += " (each layer's all-reduce crosses PCIe: slower than over NVLink)"
    return tp, pp, why


def _split_gpus(request: LayoutRequest, count: int, gpus: int) -> tuple[int, int, str]:
    """(TP, PP, why) for `count` nodes of `gpus` GPUs each."""
    if request.tensor_parallel or request.pipeline_parallel:
        tp = request.tensor_parallel or gpus
        pp = request.pipeline_parallel or 1
        why = "as asked"
        if count > 1 and tp > gpus:
            why += "; every layer's all-reduce crosses the fabric between nodes"
        return tp, pp, why
    if count == 1:
        return gpus, 1, f"across the node's {gpus} GPUs" if gpus > 1 else "one GPU"
    if gpus > 1 and request.pipeline_ok:
        return (
            gpus,
            count,
            f"TP within each node's {gpus} GPUs, PP across the {count} nodes (vLLM's guide: "
            "TP = GPUs per node, PP = nodes): only activations between stages cross the "
            f"fabric, not every layer's all-reduce; TP={gpus * count} over all GPUs works too "
            f"when asked (tensor_parallel={gpus * count}, pipeline_parallel=1)",
        )
    if gpus > 1:
        return gpus * count, 1, "tensor parallelism over every GPU of the nodes"
    tp = count & -count  # the largest power of two dividing count
    if tp == count or not request.pipeline_ok:
        return count, 1, f"tensor parallelism across {count} nodes, one GPU each"
    return (
        tp,
        count // tp,
        f"a TP size must divide the model's attention heads (a power of two), so {count} "
        f"nodes run as {count // tp} pipeline stages",
    )


def _layout(
    request: LayoutRequest, budgets: Sequence[NodeBudget], chosen: list[NodeBudget], links: Links
) -> Layout:
    count, gpus, u = len(chosen), chosen[0].gpus, request.utilization
    need = need_per_node(request.size_bytes, count)
    tp, pp, why_split = _split(request, count, chosen[0])
    stops = {
        n.host: [name for name, _ in n.holders]
        for n in chosen
        if n.usable(u) < need <= n.usable_freed(u) and n.holders
    }
    short = tuple(n.host for n in chosen if n.usable_freed(u) < need)
    return Layout(
        hosts=tuple(n.host for n in chosen),
        tensor_parallel=tp,
        pipeline_parallel=pp,
        gpus_per_node=gpus,
        share_bytes=request.size_bytes / count,
        need_bytes=need,
        of_nodes=len(budgets),
        why_nodes=_why_nodes(request, budgets, chosen, links),
        why_split=why_split,
        stops=stops,
        short=short,
    )


def _why_nodes(
    request: LayoutRequest, budgets: Sequence[NodeBudget], chosen: list[NodeBudget], links: Links
) -> str:
    count, total, u = len(chosen), len(budgets), request.utilization
    size, need = request.size_bytes, need_per_node(request.size_bytes, count)
    of = f"{count} of {total} nodes" if total > 1 else "1 node"
    best = max(n.usable_freed(u) for n in budgets)
    if not size:
        why = f"{of}: the model's size is unknown, so the nodes given are used"
    elif request.nodes or request.tensor_parallel or request.pipeline_parallel:
        why = f"{of} as asked: ~{gb(size)} of weights, ~{gb(need)} per node with KV headroom"
    elif count == 1:
        why = f"{of}: ~{gb(need)} with KV headroom fits in {chosen[0].host}'s ~{gb(best)} usable"
    else:
        fewer = need_per_node(size, count - 1)
        why = (
            f"{of}: with KV headroom the ~{gb(size)} model needs ~{gb(fewer)} per node on "
            f"{count - 1} and ~{gb(need)} on {count}, and a node gives at most ~{gb(best)} "
            + _how_usable(budgets, u)
        )
    return why + _fabric_phrase(chosen, links)


def _how_usable(budgets: Sequence[NodeBudget], u: float) -> str:
    """How a node's usable bytes come about (budget.py): unified memory counts what CUDA gives."""
    if any(n.unified for n in budgets):
        return f"({u:g} × its unified memory, within what CUDA can allocate)"
    return f"(available × {u:g})"


def _fabric_phrase(chosen: list[NodeBudget], links: Links) -> str:
    """How the chosen nodes reach each other over the fabric, for the reason text."""
    if len(chosen) == 1:
        return ""
    names = [n.host for n in chosen]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    states = {pair: links(*pair) for pair in pairs}
    who = f"{names[0]} (head) and " + ", ".join(names[1:])
    if all(link.state == "up" for link in states.values()):
        subnets = {str(link.subnet) for link in states.values()}
        if len(subnets) == 1:
            return f"; {who} share the fabric subnet {subnets.pop()}"
        return f"; {who}: every pair shares a fabric subnet of its own (one per cable)"
    unknown = [f"{a}–{b}" for (a, b), link in states.items() if link.state == "unknown"]
    apart = [f"{a}–{b}" for (a, b), link in states.items() if link.state == "none"]
    said = []
    if unknown:
        said.append(
            f"no fabric subnet seen yet for {', '.join(unknown)} (a link down or unaddressed)"
        )
    if apart:
        said.append(f"no fabric subnet in common for {', '.join(apart)}")
    return f"; {who}: " + "; ".join(said)
