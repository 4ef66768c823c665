"""What listens: ports, inference servers (by container or well-known port), the Ray cluster."""

from __future__ import annotations

from tools.recon import parsers as p
from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import (
    INFERENCE_PORTS,
    DockerFacts,
    InferenceServer,
    ServiceFacts,
)

ENGINE_WORDS = ("vllm", "sglang", "ray", "trtllm", "tensorrt", "tgi", "llama")


def read_services(reader: SectionReader, docker: DockerFacts) -> ServiceFacts:
    group = ServiceFacts()
    sockets = reader.read(group, "ss", p.parse_ss_listening) or []
    group.listening_ports = sorted({sock.port for sock in sockets})
    unclaimed = [port for port in group.listening_ports if port in INFERENCE_PORTS]
    for container in docker.containers:
        if container.state != "running":
            continue
        haystack = f"{container.name} {container.image}".lower()
        kind = next((word for word in ENGINE_WORDS if word in haystack), None)
        if kind is None:
            continue
        port = next((port for port in unclaimed if kind in INFERENCE_PORTS[port]), None)
        if port is not None:
            unclaimed.remove(port)
        group.inference_servers.append(
            InferenceServer(kind=kind, port=port, container=container.name)
        )
    group.inference_servers += [
        InferenceServer(kind=INFERENCE_PORTS[port], port=port) for port in unclaimed
    ]
    ray_section = reader.sections.get("ray")
    if ray_section is not None and not ray_section.missing:
        status = reader.read(group, "ray", p.parse_ray_status)
        if status is not None:
            group.ray_running, group.ray_nodes = status.running, status.node_count
            if (gpus := status.resource("GPU")) is not None:
                group.ray_gpus_used, group.ray_gpus_total = gpus.used, gpus.total
    return group
