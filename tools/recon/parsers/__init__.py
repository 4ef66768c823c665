"""Pure parsers for recon command output: text in, typed pydantic models out.

Each parser raises `ParseError` only for text that is clearly not what it reads; check
`is_tool_missing` first for "command not found" / "Permission denied" results. The modules with
models do not postpone their annotations, as tools/world/facts.py says why.
"""

from tools.recon.parsers.cpu import CpuCoreType, LscpuInfo, parse_lscpu
from tools.recon.parsers.cuda import NvccInfo, parse_nvcc_version
from tools.recon.parsers.disk import DiskUsage, FolderSize, parse_df, parse_du_sb
from tools.recon.parsers.docker import (
    DockerAccessProblem,
    DockerInfo,
    DockerVersion,
    docker_access_problem,
    parse_docker_info,
    parse_docker_version,
)
from tools.recon.parsers.docker_rows import (
    ContainerStats,
    DockerContainer,
    DockerImage,
    parse_docker_images_json,
    parse_docker_ps_json,
    parse_docker_stats_json,
)
from tools.recon.parsers.errors import ParseError
from tools.recon.parsers.ethtool import EthtoolInfo, parse_ethtool
from tools.recon.parsers.gids import RoceGid, parse_ibv_gids
from tools.recon.parsers.gpu_topology import GpuTopology, parse_nvidia_smi_topo
from tools.recon.parsers.hf_cache import CachedModel, parse_hf_cache_listing, repo_id_from_folder
from tools.recon.parsers.kernel import UnameInfo, parse_uname_a
from tools.recon.parsers.memory import FreeReport, FreeRow, MemInfo, parse_free, parse_meminfo
from tools.recon.parsers.missing import is_tool_missing
from tools.recon.parsers.network import (
    IpAddress,
    NetInterface,
    parse_ip_j_addr,
)
from tools.recon.parsers.nvidia_smi import (
    GpuInfo,
    GpuListEntry,
    GpuProcess,
    NvidiaSmiReport,
    parse_nvidia_smi_list,
    parse_nvidia_smi_table,
)
from tools.recon.parsers.nvidia_smi_query import NvidiaSmiQueryResult, parse_nvidia_smi_query_csv
from tools.recon.parsers.os_release import (
    DgxRelease,
    LsbRelease,
    OsRelease,
    parse_dgx_release,
    parse_lsb_release,
    parse_os_release,
)
from tools.recon.parsers.python_env import (
    PipPackage,
    PythonVersion,
    parse_pip_list_json,
    parse_python_version,
)
from tools.recon.parsers.ray import (
    RayResource,
    RayStatus,
    parse_ray_resource_line,
    parse_ray_status,
)
from tools.recon.parsers.rdma import (
    IbDevNetDev,
    RdmaLink,
    parse_ibdev2netdev,
    parse_rdma_link_show,
)
from tools.recon.parsers.sockets import ListeningSocket, parse_ss_listening
from tools.recon.parsers.units import parse_size_bytes

__all__ = [
    "CachedModel",
    "ContainerStats",
    "CpuCoreType",
    "DgxRelease",
    "DiskUsage",
    "DockerAccessProblem",
    "DockerContainer",
    "DockerImage",
    "DockerInfo",
    "DockerVersion",
    "EthtoolInfo",
    "FolderSize",
    "FreeReport",
    "FreeRow",
    "GpuInfo",
    "GpuListEntry",
    "GpuProcess",
    "GpuTopology",
    "IbDevNetDev",
    "IpAddress",
    "ListeningSocket",
    "LsbRelease",
    "LscpuInfo",
    "MemInfo",
    "NetInterface",
    "NvccInfo",
    "NvidiaSmiQueryResult",
    "NvidiaSmiReport",
    "OsRelease",
    "ParseError",
    "PipPackage",
    "PythonVersion",
    "RayResource",
    "RayStatus",
    "RdmaLink",
    "RoceGid",
    "UnameInfo",
    "docker_access_problem",
    "is_tool_missing",
    "parse_df",
    "parse_dgx_release",
    "parse_docker_images_json",
    "parse_docker_info",
    "parse_docker_ps_json",
    "parse_docker_stats_json",
    "parse_docker_version",
    "parse_du_sb",
    "parse_ethtool",
    "parse_free",
    "parse_hf_cache_listing",
    "parse_ibdev2netdev",
    "parse_ibv_gids",
    "parse_ip_j_addr",
    "parse_lsb_release",
    "parse_lscpu",
    "parse_meminfo",
    "parse_nvcc_version",
    "parse_nvidia_smi_list",
    "parse_nvidia_smi_query_csv",
    "parse_nvidia_smi_table",
    "parse_nvidia_smi_topo",
    "parse_os_release",
    "parse_pip_list_json",
    "parse_python_version",
    "parse_ray_resource_line",
    "parse_ray_status",
    "parse_rdma_link_show",
    "parse_size_bytes",
    "parse_ss_listening",
    "parse_uname_a",
    "repo_id_from_folder",
]
