"""plan_deployment checks the head's own ssh to every worker address its commands name."""

import pytest

from tests.integration.test_deploy_variants_sim import BASE, plan_on


@pytest.mark.slow
async def test_a_pair_set_up_as_nvidia_says_has_no_ssh_blocker():
    result = await plan_on("healthy-pair", BASE)
    assert not result.get("is_error"), result["content"]
    assert (
        "peer_ssh" not in result["content"]
        and "ssh 192.168.100.11 hostname" not in (result["content"])
    )


@pytest.mark.parametrize(
    ("scenario", "said", "fix"),
    [
        (
            "host-key-gap",
            "`ssh 192.168.100.11 hostname` on spark-a fails (Host key verification failed.)",
            "accept spark-b's host key under 192.168.100.11 once",
        ),
        (
            "no-peer-ssh",
            "`ssh 192.168.100.11 hostname` on spark-a fails "
            "(aurora@192.168.100.11: Permission denied (publickey).)",
            "`discover-sparks`, or `ssh-copy-id 192.168.100.11`",
        ),
    ],
)
@pytest.mark.slow
async def test_an_ssh_the_plan_needs_but_cannot_make_is_a_blocker_with_its_fix(scenario, said, fix):
    result = await plan_on(scenario, BASE)
    assert result["is_error"]
    text = result["content"]
    assert text.startswith("The plan cannot succeed until these are done (not fixable from here):")
    blockers = text.split("\n\n", 1)[0]
    assert said in blockers and fix in blockers
    assert "mpirun" in text  # the fabric test that needs it is what the plan names
