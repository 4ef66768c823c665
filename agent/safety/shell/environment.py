"""Variables that steer which program runs or what it does: setting one is never read-only.

`LD_PRELOAD` loads code into every program, `PATH` picks which program a name means, `GIT_*`
and `LESSOPEN` make read-only tools run commands, `PS4` with `SHELLOPTS=xtrace` runs code in the
shell itself, `HOME` and `XDG_CONFIG_HOME` pick the config files tools obey. Whether the variable
is set by an assignment, `export`, `env`, `read`, `printf -v`, `docker exec -e` or a tool call's
`env`, the verdict is the same.
"""

from __future__ import annotations

import re

from agent.safety.shell.options import word_set

STEERING_NAMES = word_set(
    """
    PATH BASH_ENV ENV SHELLOPTS BASHOPTS PS4 PS0 PS1 PROMPT_COMMAND IFS CDPATH GLOBIGNORE HOME
    XDG_CONFIG_HOME XDG_DATA_HOME PAGER EDITOR VISUAL BROWSER MANPAGER MANOPT GCONV_PATH LOCPATH
    NLSPATH HOSTALIASES RESOLV_HOST_CONF OPENSSL_CONF OPENSSL_ENGINES SSLKEYLOGFILE CURL_HOME
    WGETRC NETRC SSH_ASKPASS SUDO_ASKPASS SUDO_EDITOR KUBECONFIG DOCKER_CONFIG DOCKER_HOST
    DOCKER_CONTEXT TMPDIR AWKPATH AWKLIBPATH RUBYOPT RUBYLIB NODE_OPTIONS NODE_PATH
    JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS CLASSPATH GLIBC_TUNABLES MALLOC_CONF TERMINFO
    TERMINFO_DIRS INPUTRC HISTFILE ZDOTDIR SHELL SYSTEMD_EDITOR SYSTEMD_PAGER SYSTEMD_LESS
    """
)
STEERING_PATTERNS = re.compile(
    r"^(LD_|GIT_|LESS|PYTHON|PERL5|PERL_|PERLLIB|BASH_FUNC_|DYLD_|CUDA_INJECTION|PIP_|UV_|KRB5"
    r"|GCONV|LUA_)|_PAGER$|_EDITOR$|_ASKPASS$"
)


def steers(name: str) -> bool:
    return name in STEERING_NAMES or STEERING_PATTERNS.search(name) is not None


def steering_reason(name: str) -> str | None:
    """Why setting `name` is not read-only, or None for an ordinary variable."""
    if steers(name):
        return f"setting {name} changes which program runs or what it does"
    return None
