"""The simulator's stand-ins for public repositories a plan clones, by URL (without `.git`).

spark-vllm-docker (github.com/eugr/spark-vllm-docker): its `build-and-copy.sh -t TAG` builds the
image its recipes name. The real script first fetches prebuilt vLLM and FlashInfer wheels, then
builds the Dockerfile's runner stage with them, printing `Building runner image with command:
docker build -t TAG …` (build-and-copy.sh at 358bf26; the phase markers sparkrun's
builders/eugr.py reads). The stand-in keeps that runner build and its marker, so the image comes
from a real-shaped `docker build` (docker_build.py).
"""

from __future__ import annotations

_BUILD_AND_COPY = """#!/bin/bash
set -e
IMAGE_TAG=vllm-node
while [ $# -gt 0 ]; do
  case "$1" in
    -t|--tag) IMAGE_TAG="$2"; shift ;;
  esac
  shift
done
echo "Building runner image with command: docker build -t $IMAGE_TAG --progress=plain ."
docker build -t "$IMAGE_TAG" --progress=plain .
"""

_DOCKERFILE = """ARG CUDA_IMAGE=nvidia/cuda:13.0.2-devel-ubuntu24.04
FROM ${CUDA_IMAGE} AS runner
RUN apt-get update && apt-get install -y python3-pip
RUN --mount=type=bind,from=vllm_wheels,target=/workspace/vllm-wheels uv pip install vllm
COPY run-cluster-node.sh /workspace/
WORKDIR /workspace
"""

REPOSITORIES: dict[str, dict[str, str]] = {
    "https://github.com/eugr/spark-vllm-docker": {
        "build-and-copy.sh": _BUILD_AND_COPY,
        "Dockerfile": _DOCKERFILE,
        "run-recipe.py": "",
    },
}
