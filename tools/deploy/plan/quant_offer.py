"""When the model does not fit: the quantisations of the same model that would, from the recipes
Scout can see (its bundled ones, the operator's recipe and the recipes beside that file, each
recipe's stated alternatives), each judged by the one fit rule on the same nodes, with the
trade-off in one line.

"The same model" is the model id's name with its organisation and its precision words taken
off (`Qwen/Qwen3.5-122B-A10B-FP8` and `Intel/Qwen3.5-122B-A10B-int4-AutoRound` are both
qwen3.5-122b-a10b). A checkpoint's size is the one a recipe states; else it is estimated from the
bytes per parameter both names state, and said to be an estimate; with neither, the offer names
the checkpoint and says its size is unknown, never that it fits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tools.checks import GB, Finding, gb
from tools.checks.budget import NodeBudget
from tools.checks.fit_rule import Demand, NodeFit, fit_on
from tools.deploy.proof.physics import BYTES_PER_PARAM, stated_precision
from tools.deploy.recipe_book.schema import Recipe

_WORDS = re.compile(
    r"[-_.](?:" + "|".join(p for p, _, _ in BYTES_PER_PARAM) + r"|bit|quant(?:ized)?)(?=[-_.]|$)",
    re.I,
)


@dataclass(frozen=True)
class Offer:
    """A checkpoint of the same model, its size (None: unknown), and the fit rule's verdicts on
    the fewest of the plan's nodes that hold it."""

    model: str
    recipe: str
    size_bytes: int | None
    size_from: str
    verdicts: tuple[NodeFit, ...] = ()
    says: str = ""

    @property
    def fits(self) -> bool:
        return bool(self.verdicts) and all(v.holds_once_freed for v in self.verdicts)

    def line(self, model: str) -> str:
        """The trade-off, in one line."""
        if self.size_bytes is None:
            return (
                f"{self.model} ({precision(self.model)}; recipe {self.recipe}) is a smaller "
                f"quantisation of the same model, size unknown: look it up before choosing it"
            )
        nodes = len(self.verdicts)
        line = (
            f"{self.model} ({precision(self.model)}, ~{gb(self.size_bytes)} {self.size_from}; "
            f"recipe {self.recipe}) fits {nodes} node{'s' * (nodes > 1)} here: less memory at "
            f"lower fidelity than {model} ({precision(model)})"
        )
        return line + (f"; {self.says}" if self.says else "")


def same_model(model: str) -> str:
    """The model's name without its organisation and precision words, for matching."""
    name = model.rsplit("/", 1)[-1].lower()
    while (stripped := _WORDS.sub("", name)) != name:
        name = stripped
    return name


def precision(model: str) -> str:
    """The precision a checkpoint's name states, else what an unmarked checkpoint usually is."""
    stated = stated_precision(model)
    return stated[0] if stated else "unmarked: usually its native precision"


def _bytes_per_weight(model: str) -> float | None:
    stated = stated_precision(model)
    return stated[1] if stated else None


def offers(
    model: str,
    size_bytes: int,
    recipes: Iterable[Recipe],
    budgets: Sequence[NodeBudget],
    utilization: float,
) -> list[Offer]:
    """The other checkpoints of `model` the recipes name, smallest first, each judged on
    `budgets` (head first) at `utilization`; those that fit come first."""
    wanted, found = same_model(model), {}
    for recipe in recipes:
        named = [(m, None, "") for m in recipe.models if "*" not in m]
        named += [(a.model, round(a.size_gb * GB), a.says) for a in recipe.alternatives]
        for other, stated, says in named:
            if other.lower() == model.lower() or same_model(other) != wanted:
                continue
            size, where = _size(other, stated, model, size_bytes)
            known = _how_known(size, where)
            if not _smaller(other, size, model, size_bytes) or known < found.get(other, (-1,))[0]:
                continue
            verdicts = _fewest(size, budgets, utilization)
            found[other] = (known, Offer(other, recipe.name, size, where, verdicts, says))
    kept = [offer for _, offer in found.values()]
    return sorted(kept, key=lambda o: (not o.fits, o.size_bytes or size_bytes))


def _how_known(size: int | None, where: str) -> int:
    """A size a recipe states (2) over an estimate (1) over none (0), when several recipes
    name one checkpoint."""
    return 0 if size is None else 2 if where.startswith("as its recipe") else 1


def _smaller(other: str, size: int | None, model: str, size_bytes: int) -> bool:
    """Smaller than the model asked for: by size when known, else by the precisions the names
    state (an unmarked checkpoint is usually the native, larger one: never offered)."""
    if size is not None:
        return size < size_bytes
    theirs, mine = _bytes_per_weight(other), _bytes_per_weight(model)
    return theirs is not None and (mine is None or theirs < mine)


def _size(other: str, stated: int | None, model: str, size: int) -> tuple[int | None, str]:
    if stated is not None:
        return stated, "as its recipe states"
    mine, theirs = _bytes_per_weight(model), _bytes_per_weight(other)
    if mine is None or theirs is None:
        return None, ""
    return round(size * theirs / mine), "estimated from the precisions the names state"


def _fewest(
    size: int | None, budgets: Sequence[NodeBudget], utilization: float
) -> tuple[NodeFit, ...]:
    """The fit rule's verdicts on the fewest leading nodes that hold `size`; () if none do."""
    if size is None:
        return ()
    for count in range(1, len(budgets) + 1):
        verdicts = tuple(fit_on(b, Demand(size), count, utilization) for b in budgets[:count])
        if all(v.holds_once_freed for v in verdicts):
            return verdicts
    return ()


def with_offers(finding: Finding, found: list[Offer], model: str) -> Finding:
    """The memory blocker with the quantisations that fit (or, of unknown size, might) named in
    its fix, and their verdicts beside its own."""
    shown = [o for o in found if o.fits or o.size_bytes is None]  # none said to fit that does not
    if not shown:
        return finding
    named = "; ".join(o.line(model) for o in shown[:3])
    fix = f"{finding.fix}; or a smaller quantisation of the same model: {named}"
    claims = [v.claim() for o in shown for v in o.verdicts]
    return finding.model_copy(update={"fix": fix, "fit": [*finding.fit, *claims]})
