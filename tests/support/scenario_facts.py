"""Each bundled scenario's hosts as recon reads them, without SSH: every host is laid out as the
sim lays it out, the probe script runs in its sandbox and its sections are parsed, the same
path `recon` takes over SSH. Cached per process; each host takes a couple of seconds."""

from __future__ import annotations

import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from sim.hostdir import materialize
from sim.scenario import load_scenario
from tools.recon.probe import build_probe_script, split_sections
from tools.recon.probe_parse import facts_from_sections
from tools.world.facts import HostFacts

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


@cache
def scenario_facts(name: str) -> dict[str, HostFacts]:
    """Host name → facts for the scenario `name`, in the scenario's order."""
    spec = load_scenario(name)
    folder = Path(tempfile.mkdtemp(prefix=f"scout-facts-{name}-"))
    script = build_probe_script()

    def probe(host: str) -> HostFacts:
        root = materialize(spec.hosts[host], spec.user, folder / host)
        launch = str(root / "sandbox" / "launch")
        result = subprocess.run([launch, script], capture_output=True, text=True, check=False)
        return facts_from_sections(host, split_sections(result.stdout), NOW)

    with ThreadPoolExecutor(max_workers=2) as pool:
        facts = list(pool.map(probe, spec.hosts))
    return dict(zip(spec.hosts, facts, strict=True))
