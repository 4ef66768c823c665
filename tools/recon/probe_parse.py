"""From the probe's sections to `HostFacts`: each fact group read by its module in readers/.

A section whose tool is missing, refused, or printed something unreadable leaves its facts None
and says why in the group's `problem`; it never fails the host.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from tools.recon.readers.docker import read_docker
from tools.recon.readers.fabric import read_fabric_tests, read_network, read_rdma
from tools.recon.readers.gpu import read_gpu, read_memory
from tools.recon.readers.kits import read_deploy_kits
from tools.recon.readers.section_reader import SectionReader
from tools.recon.readers.services import read_services
from tools.recon.readers.system import (
    read_cpu,
    read_disk,
    read_hf_cache,
    read_identity,
    read_os,
    read_python,
    read_toolkit,
)
from tools.recon.readers.wall import read_wall
from tools.recon.sections import Section
from tools.world.facts import HostFacts


def facts_from_sections(
    host: str,
    sections: Mapping[str, Section],
    collected_at: datetime,
    unwalled: str | None = None,
) -> HostFacts:
    """`unwalled`: why the probe could not run inside the wall (None: it did, or was not asked)."""
    reader = SectionReader(host, sections, collected_at)
    facts = HostFacts(host=host, collected_at=collected_at)
    facts.identity = read_identity(reader)
    facts.os = read_os(reader)
    facts.cpu = read_cpu(reader)
    facts.gpu, unified, gpu_memory = read_gpu(reader)
    facts.memory = read_memory(reader, unified, gpu_memory, len(facts.gpu.gpus))
    facts.toolkit = read_toolkit(reader)
    facts.disk = read_disk(reader)
    facts.hf_cache = read_hf_cache(reader)
    facts.docker = read_docker(reader, facts.gpu)
    facts.rdma = read_rdma(reader)
    facts.network = read_network(reader, facts.rdma)
    facts.fabric_tests = read_fabric_tests(reader)
    facts.kits = read_deploy_kits(reader)
    facts.python = read_python(reader)
    facts.services = read_services(reader, facts.docker)
    facts.wall = read_wall(reader, unwalled)
    return facts
