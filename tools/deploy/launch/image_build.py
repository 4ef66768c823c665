"""An image that no registry holds, because its recipe's runner builds it: built on the head as a
job of the plan.

spark-vllm-docker's recipes name images such as `vllm-node` or `vllm-node-b12x` that its
`build-and-copy.sh -t NAME` builds (sparkrun's eugr builder runs the same script, for the images
it builds under its own names); `docker pull vllm-node` would ask Docker Hub for
`library/vllm-node`, which is not that image. When the head lacks it, the plan's step clones the
runner's repository on the head (where it has not been cloned before) and runs the runner's own
build script there as a job: gated with the plan, its progress read from the build's log
(tools/jobs/progress/docker_build.py), its check the image listed on the head. The workers then
get the head's image by `docker save | ssh … docker load`, as for any image.
"""

from __future__ import annotations

import re
import shlex

from tools.deploy.steps import DeployStep, StepCheck

BUILD_JOB = "build-image"
RUNNER_REPOSITORY = "https://github.com/eugr/spark-vllm-docker.git"
CHECKOUT = "$HOME/.cache/scout/spark-vllm-docker"  # the head's clone, kept for the next build
_SCRIPT = re.compile(r"^\./(?P<script>[\w.-]+\.sh)(?P<args>(?:\s+\S+)*)$")


def build_step(head: str, image: str, build: str) -> DeployStep:
    """The step that builds `image` on `head` with the runner's `build` command
    (`./build-and-copy.sh -t NAME …`); ValueError for a command that is not such a script."""
    match = _SCRIPT.match(build.strip())
    if match is None:
        raise ValueError(f"`{build}` is not the runner's build script with its options")
    args = shlex.split(match["args"])
    run = shlex.join(["bash", match["script"], *args])
    action = (
        f'd="{CHECKOUT}"; if [ ! -d "$d/.git" ]; then mkdir -p "$(dirname "$d")" && '
        f'git clone --depth 1 {RUNNER_REPOSITORY} "$d"; fi && cd "$d" && {run}'
    )
    return DeployStep(
        kind="image-build",
        id=f"build:{head}",
        title=f"build {image} on {head} with spark-vllm-docker's `{build}` (no registry has it)",
        host=head,
        actions=[action],
        check=StepCheck(
            host=head,
            command="docker images --format '{{.Repository}}:{{.Tag}}'",
            expect=f"^{re.escape(image if ':' in image else image + ':latest')}$",
            description=f"{image} is listed on {head}",
        ),
        rollback=f"docker rmi {image}",
        job=BUILD_JOB,
    )
