"""Progress of a `docker build` job from BuildKit's plain records (the `#N [k/n] …` shape of
docker/build-push-action#885's log) and the runner script's phase line."""

from __future__ import annotations

from tools.jobs.progress.readers import read_progress

COMMAND = "cd d && bash build-and-copy.sh -t vllm-node"
RUNNING = """Building runner image with command: docker build -t vllm-node --progress=plain .
#0 building with "default" instance using docker driver

#5 [runner 1/11] FROM docker.io/nvidia/cuda:13.0.2-devel-ubuntu24.04@sha256:1b3c
#5 DONE 0.0s

#6 [runner 2/11] RUN apt-get update
#6 CACHED

#17 [runner 3/11] RUN chmod 700 node_modules/puppeteer/.local-chromium/linux-*/chrome
#17 sha256:35eb1fdebbb4820d0127f245e009a1f43bf2d27e28dce06f10a72fe72dbc7698 0B / 101.05MB 0.2s
"""


def test_a_running_build_counts_the_steps_ended_of_its_stage():
    progress = read_progress(COMMAND, RUNNING)
    assert progress.kind == "docker_build"
    assert progress.summary == "Building runner image, 2/11 build steps done"
    assert progress.fraction is not None and round(progress.fraction, 3) == 0.182


def test_a_finished_build_names_the_image_it_tagged():
    done = RUNNING + "#17 DONE 41.2s\n#30 naming to docker.io/library/vllm-node:latest done\n"
    progress = read_progress(COMMAND, done, exited_ok=True)
    assert progress.summary == "built vllm-node:latest" and progress.fraction == 1.0
    assert progress.facts["image"] == "vllm-node:latest"


def test_a_build_log_is_recognised_without_the_command_naming_it():
    progress = read_progress("make image", RUNNING)
    assert progress.kind == "docker_build"
