"""What OpenSSH's client is told for a host (tools/recon/ssh_client.py): the pool's login and no
more, and nothing at all where it would read a value differently from the pool (a jump host,
a value it would expand or split, an address it would take for an option or a user); and how
recon's one answer comes apart into the probe's two parts (tools/recon/openssh.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.recon.openssh import split_parts
from tools.recon.ssh_client import ssh_command
from tools.ssh import HostSpec, Inventory

KNOWN = Path("/srv/scout/known_hosts")


def spec(host: dict[str, object], defaults: dict[str, object] | None = None) -> HostSpec:
    data: dict[str, object] = {
        "known_hosts": str(KNOWN),
        "defaults": defaults or {},
        "hosts": {"h": host},
    }
    if "jump" in host:
        data["hosts"] = {"h": host, "j": {"address": "10.0.0.1"}}
    return Inventory.from_dict(data).get("h")


def options(command: list[str]) -> dict[str, str]:
    said = [word[2:] for word in command if word.startswith("-o")]
    return dict(option.split("=", 1) for option in said)


def test_the_pools_login_and_only_the_inventorys_known_hosts() -> None:
    host = spec({"address": "10.0.0.2", "port": 2222, "user": "aurora"},
                {"identity_file": "/keys/id_ed25519"})  # fmt: skip
    command = ssh_command(host, KNOWN, "/usr/bin/ssh")
    assert command is not None
    assert command[:3] == ["/usr/bin/ssh", "-F", "/dev/null"]  # no user's or system's config
    assert command[-8:] == [
        "-i",
        "/keys/id_ed25519",
        "-p",
        "2222",
        "-l",
        "aurora",
        "--",
        "10.0.0.2",
    ]
    said = options(command)
    assert said["UserKnownHostsFile"] == str(KNOWN)
    assert said["GlobalKnownHostsFile"] == "none"
    assert said["StrictHostKeyChecking"] == "yes"
    assert said["UpdateHostKeys"] == "no"
    assert said["BatchMode"] == "yes"
    assert said["ProxyJump"] == "none" and said["ProxyCommand"] == "none"
    assert said["IdentitiesOnly"] == "no"


@pytest.mark.parametrize(
    ("host", "defaults"),
    [
        ({"address": "10.0.0.2", "jump": "j"}, {}),
        ({"address": "10.0.0.2"}, {"identity_file": "/keys/%h_key"}),
        ({"address": "10.0.0.2"}, {"identity_file": "/keys/my key"}),
        ({"address": "10.0.0.2"}, {"identity_file": "/keys/${KEY}"}),
        ({"address": "-oProxyCommand=sh"}, {}),
        ({"address": "someone@10.0.0.2"}, {}),
        ({"address": "10.0.0.2", "user": "a b"}, {}),
    ],
)
def test_nothing_where_openssh_would_read_it_differently(
    host: dict[str, object], defaults: dict[str, object]
) -> None:
    assert ssh_command(spec(host, defaults), KNOWN, "/usr/bin/ssh") is None


def test_a_known_hosts_path_openssh_would_expand_is_not_given_to_it() -> None:
    host = spec({"address": "10.0.0.2"})
    assert ssh_command(host, Path("/home/%u/known_hosts"), "/usr/bin/ssh") is None


def test_both_parts_come_apart_with_their_statuses_and_a_cut_one_has_none() -> None:
    both = "a\nb\n@@scout:part inside 0@@\nc\n@@scout:part outside 124@@\n"
    assert split_parts(both) == {"inside": ("a\nb\n", 0), "outside": ("c\n", 124)}
    unended = "@@scout-wall missing@@scout:part inside 199@@\n"  # no newline before the status
    assert split_parts(unended)["inside"] == ("@@scout-wall missing", 199)
    assert split_parts("a\nb") == {"inside": ("a\nb", None), "outside": ("", None)}
