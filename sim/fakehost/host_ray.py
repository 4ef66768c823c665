"""`ray` on the host itself: only where the scenario left a Ray cluster running outside any
container (`ray_cluster`), the stale cluster Spark owners report holding every GPU ("Current node
has no GPU available", docs/sources.md §9, "other failures users report"). `ray status`
prints Ray 2.x's layout (tests/fixtures/recon/spark_ray_status_2nodes.txt) with the GPUs held
in placement groups as `2.0/2.0 GPU (2.0 used of 2.0 reserved in placement groups)`
(tests/fixtures/jobs/ray_status_2nodes_16gpu_all_reserved_in_placement_groups.txt); `ray stop`
ends it. Without a cluster the host has no `ray`: the shell's 127.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .state import locked_state


def run_host_ray(args: list[str], state: dict[str, Any], host_dir: Path) -> int:
    cluster = state.get("ray_cluster")
    if not cluster:
        sys.stderr.write("bash: line 1: ray: command not found\n")
        return 127
    if args[:1] == ["stop"]:
        with locked_state(host_dir) as current:
            current["ray_cluster"] = None
        sys.stdout.write("Stopped all 5 Ray processes.\n")
        return 0
    if args[:1] != ["status"]:
        sys.stderr.write(f"ray: {' '.join(args[:1])}: not simulated on the host\n")
        return 2
    gpus, used = float(cluster["gpus"]), float(cluster["gpus_used"])
    held = f" ({used:.1f} used of {used:.1f} reserved in placement groups)" if used else ""
    nodes = [f" 1 node_{n:056x}" for n in range(1, int(cluster["nodes"]) + 1)]
    lines = [
        "======== Autoscaler status: 2026-04-10 05:23:31.894412 ========",
        "Node status",
        "-" * 63,
        "Active:",
        *nodes,
        "Pending:",
        " (no pending nodes)",
        "Recent failures:",
        " (no failures)",
        "",
        "Resources",
        "-" * 63,
        "Total Usage:",
        f" 0.0/{20.0 * len(nodes):.1f} CPU",
        f" {used:.1f}/{gpus:.1f} GPU{held}",
        " 0B/218.83GiB memory",
        " 0B/19.46GiB object_store_memory",
        "",
        "From request_resources:",
        " (none)",
        "Pending Demands:",
        " (no resource demands)",
    ]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
