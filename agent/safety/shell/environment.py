"""Which variables a read-only command may set: an allow-list of inert names, nothing else.

Programs read their environment for far more than anyone can list (`TAR_OPTIONS` adds options,
`KUBECTL_EXTERNAL_DIFF` names a program, `HF_ENDPOINT` and the proxies decide where a token goes,
`DBUS_*_BUS_ADDRESS` which bus a command talks to), so the list is of names known to change only
how output looks. Any other name set for a program (`env`, a prefix assignment, `export`, a tool
call's `env`, `docker exec -e`) makes the call ask, and the reason names it. A plain shell
variable (`for h in …`, `read line`, `D=/var/log`) reaches no program unless it is already
exported, so there script names are allowed too, except the names the shell obeys or that look
like an exported program setting (`IFS`, `*_PROXY`, `DOCKER_*`, `*_OPTIONS`). Endpoint
variables are allowed when their value is a literal loopback address.
"""

from __future__ import annotations

import re

from agent.safety.shell.endpoints import is_loopback_url
from agent.safety.shell.options import word_set

INERT_NAMES = word_set(
    """
    LANG LANGUAGE TZ TERM COLUMNS LINES NO_COLOR FORCE_COLOR CLICOLOR CLICOLOR_FORCE COLORTERM
    TIME_STYLE QUOTING_STYLE BLOCK_SIZE DF_BLOCK_SIZE DU_BLOCK_SIZE LS_BLOCK_SIZE LS_COLORS
    GREP_COLOR GREP_COLORS POSIXLY_CORRECT SYSTEMD_COLORS SYSTEMD_URLIFY SYSTEMD_LOG_COLOR
    SYSTEMD_LOG_LEVEL DEBIAN_FRONTEND CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER HF_HUB_OFFLINE
    TRANSFORMERS_OFFLINE HF_HUB_DISABLE_TELEMETRY HF_HUB_DISABLE_PROGRESS_BARS NO_PROXY no_proxy
    PYTHONUNBUFFERED PYTHONDONTWRITEBYTECODE PYTHONIOENCODING OMP_NUM_THREADS
    """
)
INERT_PATTERN = re.compile(r"^LC_[A-Z]+$")
# Pagers and editors that only print, when set to one of these values.
PAGER_NAMES = word_set("PAGER SYSTEMD_PAGER GIT_PAGER MANPAGER KUBECTL_PAGER")
INERT_PAGERS = frozenset({"", "cat", "/bin/cat", "/usr/bin/cat"})
ENDPOINT_NAMES = word_set(
    "DOCKER_HOST HF_ENDPOINT HTTP_PROXY HTTPS_PROXY ALL_PROXY FTP_PROXY http_proxy https_proxy "
    "all_proxy ftp_proxy CONTAINER_RUNTIME_ENDPOINT CONTAINERD_ADDRESS"
)
LOCAL_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
# A bare `NAME=value` reaches programs only when NAME is already exported; these are the names
# that are (or that the shell itself obeys), so a bare one of them asks too.
ENVIRONMENT_SHAPED = re.compile(
    r"^(PATH|IFS|CDPATH|HOME|SHELL|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|GLOBIGNORE|PS[0-4]|USER|TMPDIR"
    r"|PROMPT_COMMAND|HISTFILE|INPUTRC|EDITOR|VISUAL|PAGER|BROWSER|TERMINFO|KUBECONFIG|NETRC)$"
    r"|^(LD_|GIT_|LESS|PYTHON|PERL|RUBY|NODE_|JAVA|BASH_|DYLD_|CUDA_INJECTION|PIP_|UV_|KRB5|GCONV"
    r"|LUA_|DOCKER_|KUBE|HF_|HUGGING|TAR_|DBUS_|SSH_|XDG_|SYSTEMD_|GNUPG|GPG|AWS_|NCCL_|OMPI_"
    r"|CURL_|WGET|OPENSSL|SSL_|REQUESTS_|CONDA|VIRTUAL_ENV)"
    r"|(_PROXY|_HOST|_ENDPOINT|_ADDRESS|_URL|_OPTIONS|_OPTS|_FLAGS|_ARGS|_CONFIG|_PATH|_HOME"
    r"|_DIR|_FILE|_COMMAND|_CMD|_PROGRAM|_PAGER|_EDITOR|_DIFF|_ASKPASS|_TOKEN|_KEY|_SERVER)$"
)
SHELL_OWN = word_set("REPLY OPTARG OPTIND MAPFILE")  # the shell's own defaults for read, getopts


def is_inert(name: str, value: str | None = None) -> bool:
    """True when exporting `name` (with `value`, when known) only changes how output looks."""
    if name in INERT_NAMES or INERT_PATTERN.match(name):
        return True
    if value is None:
        return False
    if name in PAGER_NAMES:
        return value in INERT_PAGERS
    if name in ENDPOINT_NAMES:
        return is_loopback_url(value)
    return False


def variable_reason(name: str, value: str | None = None, *, exported: bool = True) -> str | None:
    """Why setting `name` is not read-only (None when it is allowed); `exported` when a program
    receives it in its environment rather than the shell keeping it to itself."""
    if is_inert(name, value):
        return None
    if not exported and (name in SHELL_OWN or (LOCAL_NAME.match(name) and "proxy" not in name)):
        return None
    if not exported and not LOCAL_NAME.match(name) and not ENVIRONMENT_SHAPED.search(name):
        return None
    if name in ENDPOINT_NAMES:
        return f"setting {name} chooses where requests go (only a loopback address is read-only)"
    return f"setting {name} is not on the list of inert variables (it may steer the program)"


def steering_reason(name: str, value: str | None = None) -> str | None:
    """Why putting `name` into a program's environment is not read-only, or None."""
    return variable_reason(name, value, exported=True)


def shell_variable_reason(name: str, value: str | None = None) -> str | None:
    """Why setting `name` in the shell itself (loop, `read`, assignment) is not read-only."""
    return variable_reason(name, value, exported=False)
