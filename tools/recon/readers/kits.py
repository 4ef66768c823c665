"""Deployment kits on a host: a spark-vllm-docker checkout whose recipes Scout can read
(tools/recon/sections.py DEPLOY_KITS_COMMAND)."""

from __future__ import annotations

from tools.recon.readers.section_reader import SectionReader
from tools.world.facts import DeployKitFacts


def read_deploy_kits(reader: SectionReader) -> DeployKitFacts:
    """The recipes folder and its count (`absent`: none checked out; nothing said: unknown)."""
    group = DeployKitFacts()
    said = reader.read(group, "deploy-kits", str.split)
    if said and said[0].startswith("/"):
        group.spark_vllm_docker = said[0]
        if len(said) > 1 and said[1].isdigit():
            group.recipes = int(said[1])
    return group
