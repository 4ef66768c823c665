"""The engines' own data (bundled/engines.yaml): per launch the default image, port, rendezvous
port, container name and the flags and env every launch carries; NCCL's env on an RDMA fabric;
image versions refused whatever the recipe."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from pydantic import Field

from tools.deploy.recipe_book.schema import BadImage, Engine, EnvVar, Flag, ImageChoice, Strict
from tools.text.yaml_files import load_yaml


class Sourced(Strict):
    value: int | str
    source: str = Field(min_length=3)


class LaunchData(Strict):
    engine: Engine
    image: ImageChoice
    port: Sourced
    dist_port: Sourced
    container: Sourced
    flags: list[Flag] = Field(default_factory=list)
    env: list[EnvVar] = Field(default_factory=list)


class EngineBook(Strict):
    launches: dict[str, LaunchData]
    known_bad_images: list[BadImage] = Field(default_factory=list)
    rdma_env: list[EnvVar] = Field(default_factory=list)


@cache
def engine_book() -> EngineBook:
    text = files("tools.deploy.recipe_book").joinpath("bundled/engines.yaml").read_text()
    return EngineBook.model_validate(load_yaml(text))


def launch_data(launch: str) -> LaunchData:
    return engine_book().launches[launch]
