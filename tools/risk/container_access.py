"""What of the host a container may be given: mounts and devices are allow-lists; with the
flags that hand the host over, what docker_ctl's `run` and the shell's `docker run` are judged by.

A container may get named volumes (and anonymous ones), tmpfs, the Hugging Face cache, model
folders, the timezone files read-only, the NVIDIA GPU devices (`/dev/nvidia*`, CDI
`nvidia.com/gpu=…`) and the RDMA devices (`/dev/infiniband`). Anything else of the host (another
path, another device, a volume driver's options, a mount type or option not understood) hands
the host over and is destructive; the reason says, in the operator's words, what the container
would get. Paths are normalised first (`..`, `//`) so no spelling slips past.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

HOME = r"(?:~|\$HOME|\$\{HOME\}|/root|/home/[^/]+)"
# The Hugging Face cache (HF_HOME's default, or a hub/ folder) and folders that hold models.
HF_CACHE = re.compile(rf"{HOME}/\.cache/huggingface(?:/.*)?")
MODEL_FOLDER_WORDS = frozenset({"models", "model", "weights", "checkpoints", "huggingface", "hf",
                                "hf_cache", "hf-cache", "hf_home", "hub"})  # fmt: skip
READ_ONLY_FILES = frozenset({"/etc/localtime", "/etc/timezone"})
# System trees a model folder can never live under.
SYSTEM_TREES = ("/etc", "/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib",
                "/lib32", "/lib64", "/run", "/var/run", "/var/lib/docker", "/var/lib/containerd",
                "/var/lib/kubelet", "/var/spool", "/var/log", "/root/.ssh", "/snap")  # fmt: skip
GPU_DEVICE = re.compile(r"/dev/nvidia(?:[0-9]+|ctl|-uvm|-uvm-tools|-modeset|-nvswitch[0-9]*"
                        r"|-nvlink)")  # fmt: skip
RDMA_DEVICE = re.compile(r"/dev/infiniband(?:/[A-Za-z0-9_]+)?")
CDI_GPU = re.compile(r"nvidia\.com/gpu=[A-Za-z0-9_,.-]+")
MOUNT_KEYS = {
    "bind": frozenset({"source", "src", "target", "dst", "destination", "readonly", "ro",
                       "bind-propagation", "consistency", "bind-recursive"}),
    "volume": frozenset({"source", "src", "target", "dst", "destination", "readonly", "ro",
                         "volume-nocopy", "volume-subpath"}),
    "tmpfs": frozenset({"target", "dst", "destination", "tmpfs-size", "tmpfs-mode", "readonly",
                        "ro"}),
}  # fmt: skip


def mount_problem(spec: str) -> str | None:
    """Why `-v SRC:DST[:opts]` or `--mount k=v,…` hands the host over, if it does."""
    if "=" in spec.split(":", 1)[0] or spec.startswith("type="):
        return _mount_flag_problem(spec)
    parts = spec.split(":")
    if len(parts) == 1:
        return None  # `-v /data`: an anonymous volume at the container's /data
    return host_path_problem(parts[0], read_only="ro" in parts[2].split(",") if len(parts) > 2
                             else False)  # fmt: skip


def _mount_flag_problem(spec: str) -> str | None:
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, _, value = part.partition("=")
        fields[key.strip()] = value
    kind = fields.get("type", "volume")
    if kind not in MOUNT_KEYS:
        return f"mounts a {kind!r} mount, which Scout does not know to be harmless"
    unknown = sorted(set(fields) - MOUNT_KEYS[kind] - {"type"})
    if unknown:
        return f"sets mount option {unknown[0]} (a volume driver's options can bind any host path)"
    if kind != "bind":
        return None
    source = fields.get("source") or fields.get("src") or ""
    read_only = "readonly" in fields or "ro" in fields
    return host_path_problem(source, read_only=read_only)


def host_path_problem(source: str, *, read_only: bool = False) -> str | None:
    """Why giving a container this host path hands the host over; None for a named volume,
    the HF cache or a model folder."""
    if not source:
        return "mounts a host path that is not named"
    if not source.startswith(("/", "~", "$", ".")):
        return None if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", source) else (
            f"mounts {source!r}, which is neither a named volume nor a host path Scout knows"
        )  # fmt: skip
    if source.startswith("$") and not re.match(r"\$\{?HOME\b", source):
        return f"mounts {source}: a variable decides which host path the container gets"
    if source.startswith("."):
        return f"mounts {source}: a path relative to wherever docker runs"
    clean = _normal(source)
    if clean in READ_ONLY_FILES and read_only:
        return None
    if HF_CACHE.fullmatch(clean) or _model_folder(clean):
        return None
    return f"mounts the host's {clean}: {_what_it_is(clean)}"


def _normal(path: str) -> str:
    head = re.match(rf"{HOME}", path)
    if head and head.group() in ("~", "$HOME", "${HOME}"):
        return "~" + posixpath.normpath("/" + path[head.end() :]).rstrip("/")
    return posixpath.normpath(re.sub(r"/+", "/", path)) or "/"


def _model_folder(path: str) -> bool:
    """A folder named for models, below the home or a data folder, never in a system tree or a
    hidden folder (`~/.ssh/models` is still ~/.ssh)."""
    if any(path == tree or path.startswith(tree + "/") for tree in SYSTEM_TREES):
        return False
    words = [part for part in path.split("/") if part not in ("", "~")]
    if any(part.startswith(".") and part != ".cache" for part in words):
        return False
    return any(part.lower() in MODEL_FOLDER_WORDS for part in words)


def _what_it_is(path: str) -> str:
    """The host path in words the operator reads before answering."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".sock") or ("/run/" in path + "/" and name.endswith(("sock", "socket"))):
        return ("a control socket: whoever holds it commands the host's containers or services, "
                "which is root on the host")  # fmt: skip
    if path.startswith(("/run/systemd", "/var/run/systemd", "/run/dbus", "/var/run/dbus")):
        return "the host's service manager (systemd, D-Bus): it starts and stops anything as root"
    if "/.ssh" in path + "/" or path.endswith("/.ssh"):
        return "SSH keys: the container could log in as this user, or let others log in here"
    if path == "/tmp" or path.startswith("/tmp/"):
        return "the host's shared /tmp, where ssh-agent, tmux and X sockets live"
    if path in ("/", "~", "/home", "/root") or (path.startswith("/home/") and path.count("/") == 2):
        return "a whole home or the root of the host's files"
    if any(path == tree or path.startswith(tree + "/") for tree in SYSTEM_TREES):
        return "a system folder: the container could change how the host boots, runs or logs in"
    return "a host folder that is not the HF cache, a model folder or a named volume"


def device_problem(device: str) -> str | None:
    """Why `--device HOST[:CONTAINER[:PERMS]]` hands the host over; None for GPUs and RDMA."""
    if CDI_GPU.fullmatch(device):
        return None
    path = _normal(device.split(":", 1)[0])
    if GPU_DEVICE.fullmatch(path) or RDMA_DEVICE.fullmatch(path):
        return None
    return f"gives the container the host's {path}: {_device_in_words(path)}"


def _device_in_words(path: str) -> str:
    name = path.removeprefix("/dev/")
    if re.match(r"(?:sd|nvme|vd|hd|xvd|mmcblk|md|dm-|loop|mapper|disk|zd|rbd|nbd)", name):
        return "a disk, which it could read or overwrite whole"
    if re.match(r"(?:sg|bsg|st|nst|sr)\d|bsg/", name):
        return "raw SCSI access to the host's disks and tapes"
    if name.startswith("ipmi") or name.startswith("bmc"):
        return "the baseboard controller (IPMI): power, firmware and the machine's network"
    if name in ("mem", "kmem", "port") or name.startswith(("mem", "kmsg")):
        return "the host's physical memory or kernel"
    if name.startswith("nvidia"):
        return "an NVIDIA control device beyond the GPUs (MIG configuration, capabilities)"
    return "a host device that is not a GPU or an RDMA device"


def run_flag_problems(
    *,
    privileged: bool = False,
    volumes: Iterable[str] = (),
    devices: Iterable[str] = (),
    pid: str | None = None,
    userns: str | None = None,
    cap_add: Iterable[str] = (),
    security_opt: Iterable[str] = (),
) -> list[str]:
    """Every flag of a `docker run` that hands the host to the container, as reasons."""
    problems = ["--privileged gives the container every host privilege"] if privileged else []
    if pid == "host":
        problems.append("--pid host shares the host's processes")
    if userns == "host":
        problems.append("--userns host turns off user-namespace isolation")
    problems += [f"--cap-add {cap} grants a host capability" for cap in cap_add]
    for option in security_opt:
        if "unconfined" in option or "disable" in option:
            problems.append(f"--security-opt {option} turns a protection off")
    problems += [p for spec in volumes if (p := mount_problem(spec))]
    problems += [p for device in devices if (p := device_problem(device))]
    return problems
