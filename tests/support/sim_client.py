"""Connecting to a simulated cluster with plain asyncssh, as its inventory says (no Scout pool)."""

from __future__ import annotations

from typing import Any

import yaml

from sim.cluster import SimCluster


def client_options(cluster: SimCluster) -> dict[str, Any]:
    """asyncssh.connect options for the cluster's hosts: its user, key and known_hosts only."""
    inventory = yaml.safe_load(
        cluster.write_inventory(cluster.root_dir / "inventory.yaml").read_text()
    )
    return {
        "username": inventory["defaults"]["user"],
        "client_keys": [inventory["defaults"]["identity_file"]],
        "known_hosts": inventory["known_hosts"],
        "agent_path": None,
        "config": None,
    }
