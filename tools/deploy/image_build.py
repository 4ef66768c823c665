"""An image that no registry holds, because its recipe's runner builds it.

spark-vllm-docker's recipes name images such as `vllm-node` or `vllm-node-b12x` that its
`build-and-copy.sh -t NAME` builds on the head and copies to the workers; `docker pull vllm-node`
would ask Docker Hub for `library/vllm-node`, which is not that image. Scout copies it from the
head when the head has it, and otherwise stops the plan with the command that builds it.
"""

from __future__ import annotations

from tools.checks import Finding
from tools.deploy.choices import DeployChoices


def build_blocker(image: str, choices: DeployChoices, build: str, missing: list[str]) -> Finding:
    """The blocker that says how to build the image, and where."""
    copy = f" --copy-to {','.join(choices.workers)}" if choices.workers else ""
    return Finding(
        severity="blocker",
        check="image",
        kind="image_must_be_built",
        hosts=missing,
        message=f"{image} is built by spark-vllm-docker, not pulled from a registry, and "
        f"{choices.head} does not have it",
        fix=f"in a spark-vllm-docker checkout on {choices.head} run `{build}{copy}`, "
        "then plan again",
    )
