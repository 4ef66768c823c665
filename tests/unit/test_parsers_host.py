"""Host identity and capacity: memory, disk, release files, kernel, CPU, CUDA, Python."""

import pytest

from tests.support.captures import capture
from tools.recon.parsers import (
    ParseError,
    parse_df,
    parse_dgx_release,
    parse_free,
    parse_lsb_release,
    parse_lscpu,
    parse_meminfo,
    parse_nvcc_version,
    parse_os_release,
    parse_pip_list_json,
    parse_python_version,
    parse_uname_a,
)

GIB = 1024**3


# Hand-written: no /proc/meminfo capture exists; MemTotal is the value seen on a Spark.
SPARK_MEMINFO = """\
MemTotal:       127600748 kB
MemFree:         3172228 kB
MemAvailable:   112381012 kB
Buffers:           42948 kB
Cached:         108516880 kB
SwapTotal:      16777212 kB
SwapFree:       16777212 kB
HugePages_Total:       0
"""


def test_meminfo_in_bytes() -> None:
    info = parse_meminfo(SPARK_MEMINFO)
    assert info.total_bytes == 127600748 * 1024
    assert info.available_bytes == 112381012 * 1024
    assert info.free_bytes == 3172228 * 1024
    assert info.cached_bytes == 108516880 * 1024
    assert info.swap_total_bytes == 16777212 * 1024
    assert info.values["HugePages_Total"] == 0


def test_meminfo_grep_subset() -> None:
    info = parse_meminfo("MemTotal:       127600748 kB\nMemAvailable:   112381012 kB\n")
    assert info.total_bytes == 127600748 * 1024
    assert info.free_bytes is None


def test_meminfo_rejects_other_text() -> None:
    with pytest.raises(ParseError, match="MemTotal"):
        parse_meminfo("grep: /proc/meminfo: Permission denied")


def test_free_h_on_spark() -> None:
    report = parse_free(capture("spark_free_h.txt"))
    assert report.memory.total_bytes == 121 * GIB
    assert report.memory.available_bytes == 118 * GIB
    assert report.memory.shared_bytes == round(5.3 * 1024**2)
    assert report.swap is not None
    assert (report.swap.total_bytes, report.swap.used_bytes) == (15 * GIB, 0)


def test_free_h_with_swap_in_use_beside_an_engine() -> None:
    report = parse_free(capture("spark_free_h_swap_in_use.txt"))
    assert report.memory.available_bytes == round(2.3 * GIB)
    assert report.swap is not None
    assert (report.swap.total_bytes, report.swap.used_bytes) == (15 * GIB, round(1.7 * GIB))


def test_free_b_with_header_that_lost_its_leading_spaces() -> None:
    text = (
        "total        used        free      shared  buff/cache   available\n"
        "Mem:    130663165952  3758096384 124554051584  5557453  2576980378 126701535232\n"
    )
    report = parse_free(text)
    assert report.memory.total_bytes == 130663165952
    assert report.memory.buff_cache_bytes == 2576980378
    assert report.swap is None


def test_df_h_root_on_spark() -> None:
    [root] = parse_df(capture("spark_df_h_root.txt"))
    assert (root.filesystem, root.mounted_on, root.use_percent) == ("/dev/nvme0n1p2", "/", 3)
    assert root.available_bytes == round(3.4 * 1024**4)
    assert root.used_bytes == 89 * GIB


def test_df_b1_and_wrapped_name() -> None:
    text = (
        "Filesystem        1B-blocks        Used    Available Use% Mounted on\n"
        "/dev/mapper/very-long-volume-group-name\n"
        "               983349346304 95563022336 837733072896  11% /data/hf cache\n"
    )
    [entry] = parse_df(text)
    assert entry.filesystem == "/dev/mapper/very-long-volume-group-name"
    assert (entry.size_bytes, entry.available_bytes) == (983349346304, 837733072896)
    assert entry.mounted_on == "/data/hf cache"


def test_os_release_and_lsb_release() -> None:
    release = parse_os_release(capture("spark_os-release.txt"))
    assert (release.id, release.version_id, release.version_codename) == (
        "ubuntu",
        "24.04",
        "noble",
    )
    assert release.pretty_name == "Ubuntu 24.04.4 LTS"
    lsb = parse_lsb_release(capture("spark_lsb-release.txt"))
    assert (lsb.release, lsb.description) == ("24.04", "Ubuntu 24.04.3 LTS")


def test_dgx_release_with_ota() -> None:
    release = parse_dgx_release(capture("spark_dgx-release.txt"))
    assert release.name == "DGX Spark"
    assert (release.swbuild_version, release.ota_version) == ("7.2.3", "7.3.1")
    assert release.platform == "DGX Server for KVM"


def test_dgx_release_repeated_ota_last_wins_and_quotes_optional() -> None:
    text = (
        "DGX_NAME=DGX Spark\nDGX_SWBUILD_VERSION=7.2.3\n\n"
        'DGX_OTA_VERSION="7.3.1"\n\nDGX_OTA_VERSION="7.5.0"\nDGX_OTA_DATE=\'Tue Mar 3 2026\'\n'
    )
    release = parse_dgx_release(text)
    assert release.name == "DGX Spark"
    assert release.ota_version == "7.5.0"
    assert release.ota_versions == ["7.3.1", "7.5.0"]
    assert release.ota_date == "Tue Mar 3 2026"


def test_factory_dgx_release_has_no_ota() -> None:
    assert parse_dgx_release('DGX_SWBUILD_VERSION="7.2.3"\n').ota_version is None


def test_missing_release_file_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="No such file"):
        parse_dgx_release("cat: /etc/dgx-release: No such file or directory")


def test_uname_a() -> None:
    info = parse_uname_a(capture("spark_uname_a.txt"))
    assert (info.hostname, info.kernel_release, info.machine) == (
        "hutch",
        "6.17.0-1014-nvidia",
        "aarch64",
    )
    assert info.kernel_version.startswith("#14-Ubuntu SMP PREEMPT_DYNAMIC")


def test_lscpu_lists_both_gb10_core_types() -> None:
    info = parse_lscpu(capture("spark_lscpu_head25.txt"))
    assert (info.architecture, info.cpu_count) == ("aarch64", 20)
    assert info.model_names == ["Cortex-X925", "Cortex-A725"]
    assert [core.cores_per_socket for core in info.core_types] == [10, 10]


def test_nvcc_present_and_absent() -> None:
    present = parse_nvcc_version(capture("generic_nvcc_version_13.0.88.txt"))
    assert (present.present, present.release, present.version) == (True, "13.0", "13.0.88")
    assert parse_nvcc_version(capture("spark_nvcc_not_in_path.txt")).present is False
    assert parse_nvcc_version("bash: nvcc: command not found", 127).present is False


def test_nvcc_rejects_other_text() -> None:
    with pytest.raises(ParseError, match="Cuda compilation tools"):
        parse_nvcc_version("Segmentation fault")


def test_python_version_and_pip_list() -> None:
    version = parse_python_version("Python 3.12.3\n")
    assert (version.version, version.major, version.minor, version.micro) == ("3.12.3", 3, 12, 3)
    text = (
        '[{"name": "vllm", "version": "0.11.0"}, {"name": "ray", "version": "2.49.1"}]\n'
        "\n[notice] A new release of pip is available: 24.0 -> 25.2\n"
    )
    packages = {package.name: package.version for package in parse_pip_list_json(text)}
    assert packages == {"vllm": "0.11.0", "ray": "2.49.1"}


def test_pip_list_rejects_table_format() -> None:
    with pytest.raises(ParseError, match="JSON"):
        parse_pip_list_json("Package    Version\n---------- -------\nray        2.49.1\n")
