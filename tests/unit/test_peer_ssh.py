"""Which worker addresses the head's commands name: those its own ssh must get into."""

from tools.deploy.fabric.peer_ssh import addresses_used, probe_command
from tools.deploy.steps import DeployStep, StepCheck


def step(host: str, action: str) -> DeployStep:
    check = StepCheck(host=host, command="true", description="ok")
    return DeployStep(
        kind="serve",
        id=action[:12],
        title="t",
        host=host,
        actions=[action],
        check=check,
        rollback="-",
    )


def test_only_addresses_the_heads_commands_name_are_checked() -> None:
    steps = [
        step("spark-a", "mpirun -np 2 -H 192.168.100.10:1,192.168.100.11:1 all_gather_perf"),
        step("spark-b", "ssh 192.168.200.12 true"),  # not the head's: its ssh is not the head's
        step("spark-a", "docker save I | ssh 192.168.200.130 docker load"),  # a longer address
    ]
    candidates = {"spark-b": ["192.168.100.11", "192.168.200.13"], "spark-c": [None, "spark-c"]}
    assert addresses_used(steps, "spark-a", candidates) == {"spark-b": ["192.168.100.11"]}


def test_a_lookup_through_the_management_address_names_it() -> None:
    lookup = "$(ssh 192.168.200.13 ip -4 -br addr show dev enp1s0f1np1 | head -n 1)"
    steps = [step("spark-a", f"rsync -a /w/ {lookup}:/w/")]
    assert addresses_used(steps, "spark-a", {"spark-b": [None, "192.168.200.13"]}) == {
        "spark-b": ["192.168.200.13"]
    }


def test_the_probe_cannot_prompt_and_only_prints_a_name() -> None:
    assert probe_command("192.168.100.11") == (
        "ssh -o BatchMode=yes -o ConnectTimeout=10 192.168.100.11 hostname"
    )
