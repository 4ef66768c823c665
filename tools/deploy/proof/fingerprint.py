"""What a proof's figures were measured against: the serve command, the container, the image and
its engine version, the model and its revision, each node's hardware and the fabric bandwidth
measured before serving. Community result sets (inference-atlas) attach such a fingerprint to
every figure; a figure without one cannot be compared.

The serve command and the container come from the session's rollout (the step that started the
engine on the head with that port); the rest from the world model. What is not known is said.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.deploy.proof.node_identity import NodeIdentity, disagreements
from tools.deploy.proof.report import command_hash
from tools.deploy.rollout.state import SessionState
from tools.world.store import WorldStore

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Served:
    """The engine's serve command on the head, its container, and every node its rollout used
    (`containers`: each node's engine container, where its step names one)."""

    command: str
    container: str | None
    hosts: list[str]
    containers: dict[str, str] = field(default_factory=dict)


def port_of(command: str) -> int:
    found = re.search(r"--port[ =](\d+)", command)
    return int(found.group(1)) if found else 8000


def container_of(words: list[str]) -> str | None:
    """The container from `docker exec NAME …` or `docker run … --name NAME …`."""
    if words[:2] == ["docker", "exec"]:
        rest = [w for w in words[2:] if not w.startswith("-")]
        return rest[0] if rest else None
    if words[:2] == ["docker", "run"] and "--name" in words[:-1]:
        return words[words.index("--name") + 1]
    return None


def served(state: SessionState, host: str, port: int) -> Served | None:
    """The rollout step that serves `port` on `host`, and the hosts of that deployment's engine."""
    for steps in state.deployments.values():
        serving = [s for s in steps if re.search(r"\b(vllm serve|sglang\.launch_server)\b",
                                                  " ".join(s.actions))]  # fmt: skip
        for step in serving:
            command = step.actions[0]
            if step.host != host or "--headless" in command or port_of(command) != port:
                continue
            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            hosts = sorted({s.host for s in serving})
            head = container_of(words)
            containers = node_containers(steps) | ({host: head} if head else {})
            return Served(command, head, hosts, containers)
    return None


def node_containers(steps: list[Any]) -> dict[str, str]:
    """Host → the first container the deployment's steps name there (a Ray worker's node
    container, a headless engine's): each node's part of the engine."""
    found = {}
    for step in steps:
        try:
            words = shlex.split(step.actions[0])
        except ValueError:
            words = step.actions[0].split()
        if name := container_of(words):
            found.setdefault(step.host, name)
    return found


def fingerprint(
    world: WorldStore | None,
    model: str,
    engine: Served | None,
    bench_commands: list[str],
    identities: Mapping[str, NodeIdentity] | None = None,
) -> dict[str, Any]:
    """The fingerprint as JSON data; `unknown` where Scout did not learn it. `identities`: what
    each node's engine container said of itself (node_identity.py), and where they disagree."""
    hosts = engine.hosts if engine else []
    data: dict[str, Any] = {
        "model": model,
        "model_revision": UNKNOWN,
        "serve_command": engine.command if engine else UNKNOWN,
        "serve_command_hash": command_hash(engine.command) if engine else UNKNOWN,
        "container": (engine.container if engine else None) or UNKNOWN,
        "image": UNKNOWN,
        "image_id": UNKNOWN,
        "engine_version": UNKNOWN,
        "nodes": {},
        "fabric": UNKNOWN,
        "benchmark_commands": bench_commands,
    }
    if identities:
        data["nodes_disagree"] = [f.text for f in disagreements(identities)]
    if world is None:
        _identities(data, identities)
        return data
    for host in hosts:
        facts = world.hosts.get(host)
        if facts is None:
            data["nodes"][host] = UNKNOWN
            continue
        gpus = facts.gpu.gpus
        data["nodes"][host] = {
            "gpu": gpus[0].name if gpus else UNKNOWN,
            "gpus": len(gpus),
            "driver": facts.gpu.driver_version or UNKNOWN,
            "cuda": facts.gpu.cuda_version or UNKNOWN,
            "memory_bytes": facts.memory.total_bytes,
        }
        _image(data, facts, engine)
        copy = facts.hf_cache.copies.get(model)
        if copy is not None and copy.revision:
            data["model_revision"] = copy.revision
    tests = list(world.fabric_tests.values())
    if tests:
        last = tests[-1]
        data["fabric"] = {"test": last.test, "busbw_gb_s": last.busbw_gb_s,
                          "link_gbit": last.link_gbit, "nodes": last.nodes}  # fmt: skip
    _identities(data, identities)
    return data


def _identities(data: dict[str, Any], identities: Mapping[str, NodeIdentity] | None) -> None:
    """Each node's identity over what the world model said of it; an unknown overrides nothing."""
    for host, identity in (identities or {}).items():
        node = data["nodes"].get(host)
        node = node if isinstance(node, dict) else {}
        for key, value in identity.data().items():
            if value != UNKNOWN or key not in node:
                node[key] = value
        data["nodes"][host] = node


def _image(data: dict[str, Any], facts: Any, engine: Served | None) -> None:
    """The serving container's image, its ID and the engine version an image check found."""
    if engine is None or engine.container is None or data["image"] != UNKNOWN:
        return
    running = [c for c in facts.docker.containers if c.name == engine.container]
    if not running:
        return
    ref = running[0].image
    data["image"] = ref
    repo, _, tag = ref.partition(":")
    for image in facts.docker.images:
        if image.repository == repo and (image.tag or "latest") == (tag or "latest"):
            data["image_id"] = image.id or UNKNOWN
            if image.contents and (image.contents.vllm or image.contents.sglang):
                kind = "vllm" if image.contents.vllm else "sglang"
                data["engine_version"] = f"{kind} {image.contents.vllm or image.contents.sglang}"
