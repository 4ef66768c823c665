"""`nvidia-smi -q` (indented `Key : Value` text) and `nvidia-smi -q -x` (XML).

Both become the same report: the facts recon needs per GPU, plus the whole text as a tree for
anything else. FB memory `N/A` (GB10) gives `memory_supported=False`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from pydantic import BaseModel

from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.nvidia_smi import GpuProcess
from tools.recon.parsers.units import parse_optional_float, parse_optional_int

INDENT_WIDTH = 4
_KEY_VALUE = re.compile(r"^(?P<key>\S.*?)\s+:(?:\s(?P<value>.*))?$")
_GPU_SECTION = re.compile(r"^GPU (?P<bus_id>[0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.\d)$")


class QNode(BaseModel):
    """One line of `-q` output: a section (value None) or a key with its value, and nested lines."""

    key: str
    value: str | None = None
    children: list[QNode] = []

    def child(self, *path: str) -> QNode | None:
        """The first descendant along `path` (keys compared case-insensitively)."""
        node: QNode | None = self
        for key in path:
            if node is None:
                return None
            node = next((c for c in node.children if c.key.lower() == key.lower()), None)
        return node

    def value_at(self, *path: str) -> str | None:
        node = self.child(*path)
        return None if node is None else node.value


class GpuDetails(BaseModel):
    bus_id: str | None = None
    product_name: str | None = None
    product_architecture: str | None = None
    uuid: str | None = None
    persistence_mode: str | None = None
    addressing_mode: str | None = None
    performance_state: str | None = None
    memory_total_mib: int | None = None
    memory_used_mib: int | None = None
    memory_free_mib: int | None = None
    memory_supported: bool = False
    temperature_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    utilization_percent: int | None = None
    processes: list[GpuProcess] = []


class NvidiaSmiQReport(BaseModel):
    driver_version: str | None = None
    cuda_version: str | None = None
    attached_gpus: int | None = None
    gpus: list[GpuDetails]
    tree: QNode


def parse_nvidia_smi_q(text: str) -> NvidiaSmiQReport:
    """Read `nvidia-smi -q`. An excerpt holding only per-GPU sections reads as one GPU."""
    root = _build_tree(text)
    sections = [node for node in root.children if _GPU_SECTION.match(node.key)]
    if sections:
        gpus = [
            _gpu_from_section(node, index, _GPU_SECTION.match(node.key)["bus_id"])
            for index, node in enumerate(sections)
        ]
    else:
        gpus = [_gpu_from_section(root, 0, None)] if root.child("FB Memory Usage") else []
    return NvidiaSmiQReport(
        driver_version=_known(root.value_at("Driver Version")),
        cuda_version=_known(root.value_at("CUDA Version")),
        attached_gpus=parse_optional_int(root.value_at("Attached GPUs") or ""),
        gpus=gpus,
        tree=root,
    )


def _build_tree(text: str) -> QNode:
    root = QNode(key="nvidia-smi -q")
    stack: list[tuple[int, QNode]] = [(-1, root)]
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("="):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // INDENT_WIDTH
        match = _KEY_VALUE.match(stripped)
        node = (
            QNode(key=match["key"], value=(match["value"] or "").strip())
            if match
            else QNode(key=stripped)
        )
        while stack[-1][0] >= depth:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((depth, node))
    if not any(_has_value(node) for node in root.children):
        raise ParseError("`nvidia-smi -q` text ('Key : Value' lines)", text)
    return root


def _has_value(node: QNode) -> bool:
    return node.value is not None or any(_has_value(child) for child in node.children)


def _known(value: str | None) -> str | None:
    return None if value in (None, "", "N/A", "Not Supported", "[N/A]") else value


def _mib(value: str | None) -> int | None:
    return parse_optional_int((value or "").removesuffix("MiB"))


def _gpu_from_section(node: QNode, index: int, bus_id: str | None) -> GpuDetails:
    memory_total = _mib(node.value_at("FB Memory Usage", "Total"))
    processes = node.child("Processes")
    return GpuDetails(
        bus_id=bus_id or _known(node.value_at("PCI", "Bus Id")),
        product_name=_known(node.value_at("Product Name")),
        product_architecture=_known(node.value_at("Product Architecture")),
        uuid=_known(node.value_at("GPU UUID")),
        persistence_mode=_known(node.value_at("Persistence Mode")),
        addressing_mode=_known(node.value_at("Addressing Mode")),
        performance_state=_known(node.value_at("Performance State")),
        memory_total_mib=memory_total,
        memory_used_mib=_mib(node.value_at("FB Memory Usage", "Used")),
        memory_free_mib=_mib(node.value_at("FB Memory Usage", "Free")),
        memory_supported=memory_total is not None,
        temperature_c=parse_optional_int(
            (node.value_at("Temperature", "GPU Current Temp") or "").removesuffix("C")
        ),
        power_draw_w=parse_optional_float(_power(node, "Power Draw")),
        power_limit_w=parse_optional_float(_power(node, "Current Power Limit")),
        utilization_percent=parse_optional_int(
            (node.value_at("Utilization", "Gpu") or "").removesuffix("%")
        ),
        processes=[] if processes is None else _processes_from_section(processes, index),
    )


def _power(node: QNode, key: str) -> str:
    """Power moved from `Power Readings` to `GPU Power Readings` in newer drivers."""
    return node.value_at("GPU Power Readings", key) or node.value_at("Power Readings", key) or ""


def _processes_from_section(section: QNode, gpu_index: int) -> list[GpuProcess]:
    return [
        GpuProcess(
            gpu_index=gpu_index,
            pid=int(entry.value or 0),
            type=entry.value_at("Type") or "",
            name=entry.value_at("Name") or "",
            memory_used_mib=_mib(entry.value_at("Used GPU Memory")),
        )
        for entry in section.children
        if entry.key == "Process ID" and (entry.value or "").isdigit()
    ]


def parse_nvidia_smi_q_xml(text: str) -> NvidiaSmiQReport:
    """Read `nvidia-smi -q -x`; the DTD reference is not fetched."""
    try:
        root = ElementTree.fromstring(text.strip())
    except ElementTree.ParseError as error:
        raise ParseError(
            "`nvidia-smi -q -x` XML", text, f"The XML did not parse ({error})."
        ) from None
    if root.tag != "nvidia_smi_log":
        raise ParseError("an <nvidia_smi_log> XML document", text)
    gpus = []
    for index, gpu in enumerate(root.findall("gpu")):
        power = gpu.find("gpu_power_readings")
        if power is None:
            power = gpu.find("power_readings")
        memory_total = _mib(gpu.findtext("fb_memory_usage/total"))
        gpus.append(
            GpuDetails(
                bus_id=gpu.get("id") or _known(gpu.findtext("pci/pci_bus_id")),
                product_name=_known(gpu.findtext("product_name")),
                product_architecture=_known(gpu.findtext("product_architecture")),
                uuid=_known(gpu.findtext("uuid")),
                persistence_mode=_known(gpu.findtext("persistence_mode")),
                addressing_mode=_known(gpu.findtext("addressing_mode")),
                performance_state=_known(gpu.findtext("performance_state")),
                memory_total_mib=memory_total,
                memory_used_mib=_mib(gpu.findtext("fb_memory_usage/used")),
                memory_free_mib=_mib(gpu.findtext("fb_memory_usage/free")),
                memory_supported=memory_total is not None,
                temperature_c=parse_optional_int(
                    (gpu.findtext("temperature/gpu_temp") or "").removesuffix("C")
                ),
                power_draw_w=None
                if power is None
                else parse_optional_float(
                    power.findtext("power_draw") or power.findtext("instant_power_draw") or ""
                ),
                power_limit_w=None
                if power is None
                else parse_optional_float(
                    power.findtext("current_power_limit") or power.findtext("power_limit") or ""
                ),
                utilization_percent=parse_optional_int(
                    (gpu.findtext("utilization/gpu_util") or "").removesuffix("%")
                ),
                processes=[
                    GpuProcess(
                        gpu_index=index,
                        pid=int(info.findtext("pid") or 0),
                        type=info.findtext("type") or "",
                        name=info.findtext("process_name") or "",
                        memory_used_mib=_mib(info.findtext("used_memory")),
                    )
                    for info in gpu.iterfind("processes/process_info")
                ],
            )
        )
    return NvidiaSmiQReport(
        driver_version=_known(root.findtext("driver_version")),
        cuda_version=_known(root.findtext("cuda_version")),
        attached_gpus=parse_optional_int(root.findtext("attached_gpus") or ""),
        gpus=gpus,
        tree=_tree_from_element(root),
    )


def _tree_from_element(element: ElementTree.Element) -> QNode:
    text = (element.text or "").strip()
    return QNode(
        key=element.tag,
        value=text or None,
        children=[_tree_from_element(child) for child in element],
    )
