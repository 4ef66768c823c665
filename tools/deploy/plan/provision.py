"""Getting what the engine needs onto every node, as jobs: the image, the weights, Ray.

- Image: pulled on every node that lacks it, all at once (one job per node); a node without
  internet (reached only through its jump host, as the seed's worker) gets it from the head with
  `docker save | ssh … docker load`, the way eugr's build-and-copy.sh copies `vllm-node` to its
  peers (docs/sources.md §3.1).
- Weights: downloaded once, on the head, as a job (`hf download`; a gated model takes HF_TOKEN
  from the operator's environment at run time, never written in the plan), then copied to each
  worker over the fabric with rsync (the community recipes' way; 200 Gb/s rather than the
  Internet). A node whose cache already holds the whole model is skipped (preflight checks
  its size, that no `.incomplete` file is left, and its revision: the Hub's, or the head's for
  a worker, tools/deploy/plan/weights.py; `hf download` finishes at once when every file of the
  revision is there).
- The pulls and the download need nothing but the internet: they come first and can run at
  once; the copies follow, over the fabric when its addresses are known. The weights' copy
  also reads a node's fabric address when it starts if the node's link only comes up in an
  earlier step of the plan (tools/deploy/fabric/paths.py); the image's then goes over the management
  network. Each step's title says which path it takes.
- What the image runs: an image not yet asked is asked once it is there, once per image (a job
  running `pip show ray vllm sglang` in a throwaway container, tools/recon/image_probe.py), and
  the step passes only if the image holds the recipe's engine; the versions go to the world
  model. Nothing a read-only probe sees says which packages an image holds.
- Ray: vllm-ray needs it in every container. Where the image's probed contents lack it (NGC
  vLLM 26.05 ships without it) or were not probed, it is installed as NVIDIA's playbook does;
  if such a node cannot reach a package index, the plan takes vLLM's multiprocess recipe, which
  needs no Ray, and says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from tools.checks import Finding
from tools.deploy.choices import DeployChoices
from tools.deploy.fabric.paths import FabricPath
from tools.deploy.launch.image_build import build_step
from tools.deploy.plan.fit import cache_dir
from tools.deploy.plan.image_skew import skewed_nodes
from tools.deploy.rollout.step_jobs import IMAGE_CHECK_JOB
from tools.deploy.steps import DeployStep, StepCheck, job_log_check
from tools.recon.image_probe import contents_command
from tools.world.facts import HostFacts, Image, ImageContents

PULL_JOB = "pull-image"
DOWNLOAD_JOB = "download-weights"


@dataclass
class Provision:
    """Steps that bring image, weights and Ray; blockers; one plan line per decision."""

    steps: list[DeployStep] = field(default_factory=list)
    blockers: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    recipe: str = "vllm-ray"
    install_ray: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ProvisionInput:
    """What provisioning reads besides facts: which nodes need the weights, which nodes reach
    the internet only through another (node → its jump host), and the model's gating."""

    hosts: Mapping[str, HostFacts]
    fabric: Mapping[str, FabricPath]
    need_weights: tuple[str, ...] = ()
    offline: Mapping[str, str] = field(default_factory=dict)
    addresses: Mapping[str, str] = field(default_factory=dict)
    gated: bool = False
    token_present: bool = False
    build: str | None = None  # how the image is built where no registry holds it (a recipe's)


def image_name(image: str) -> str:
    return image if ":" in image.rsplit("/", 1)[-1] else f"{image}:latest"


def _image(facts: HostFacts, wanted: str) -> Image | None:
    return next(
        (i for i in facts.docker.images if f"{i.repository}:{i.tag or 'latest'}" == wanted), None
    )


_ORDER = ("image-build", "pull", "download", "image-copy", "image-check")


def _place(step: DeployStep) -> int:
    """Plan order: what needs only the internet first (pulls and the download can run at
    once), then the image's copies and checks (a check is quick and can stop the rollout before
    the long copies), then the weights' copies."""
    return _ORDER.index(step.kind) if step.kind in _ORDER else len(_ORDER)


def provision(data: ProvisionInput, choices: DeployChoices) -> Provision:
    result = Provision(recipe=choices.recipe)
    _images(data, choices, result)
    _weights(data, choices, result)
    _image_checks(data, choices, result)
    result.steps.sort(key=_place)
    if choices.recipe == "vllm-ray":
        _ray(data, choices, result)
    return result


def _route(data: ProvisionInput, host: str, *, read_later: bool) -> tuple[str, str]:
    """Where the head sends `host` a copy, and which path that is.

    Over the fabric when there is one between the two (a cable or a switch, not a ring) and
    the node's fabric address is known, or may be read when the copy starts (`read_later`:
    from the head, over the SSH path it already has to the node) because its link only comes
    up in an earlier step. Else the address the head reaches it at (the inventory's, or the
    management address a ring's path holds).
    """
    path = data.fabric.get(host)
    known = data.addresses.get(host, host)
    if path is None or path.routed or not (path.ip or read_later):
        return (path.ip if path and path.ip else known), "over the management network"
    return path.ip_or_lookup(via=known), f"over the fabric ({path.netdev})"


def _images(data: ProvisionInput, choices: DeployChoices, result: Provision) -> None:
    wanted = image_name(choices.image or "")
    have = [h for h in choices.hosts if _image(data.hosts[h], wanted) is not None]
    missing = [h for h in choices.hosts if h not in have]
    skewed, stop = skewed_nodes(data.hosts, choices.hosts, choices.head, wanted)
    result.blockers += [stop] if stop else []
    if not missing and not skewed:
        result.notes.append(f"image: {wanted} is on every node")
        return
    for host, old in skewed.items():
        result.steps.append(_copy_image_step(choices.head, host, wanted, data, False, old))
    if skewed:
        head_id = _identity(_image(data.hosts[choices.head], wanted), choices.head)
        result.notes.append(
            f"image: {wanted} is another image on {', '.join(skewed)} than on {choices.head} "
            f"({head_id[:12]}): copied from {choices.head} with `docker save | ssh … docker "
            "load`, so every node runs the same engine (its old one is tagged back on rollback)"
        )
    if not missing:
        return
    if data.build is not None:  # the recipe's runner builds it: no registry has it
        built = choices.head in missing
        if built:
            result.steps.append(build_step(choices.head, wanted, data.build))
        after = [f"build:{choices.head}"] if built else []
        for host in (h for h in missing if h != choices.head):
            copy = _copy_image_step(choices.head, host, wanted, data, False)
            result.steps.append(copy.model_copy(update={"needs": after}))
        how = (
            f"built on {choices.head} as a job (`{data.build}`)" if built else "built, never pulled"
        )
        result.notes.append(f"image: {wanted} ({how}) copied from {choices.head}")
        return
    pulls = [h for h in missing if h not in data.offline]
    for host in pulls:
        result.steps.append(_pull_step(host, wanted))
    copies = [h for h in missing if h in data.offline]
    for host in copies:
        result.steps.append(
            _copy_image_step(choices.head, host, wanted, data, choices.head in pulls)
        )
    said = []
    if pulls:
        each = " at once (one job each)" if len(pulls) > 1 else " as a job"
        said.append(f"pulled on {', '.join(pulls)}{each}")
    if copies:
        paths = " and ".join(sorted({_route(data, h, read_later=False)[1] for h in copies}))
        reach = "reach" if len(copies) > 1 else "reaches"
        said.append(
            f"copied to {', '.join(copies)} from {choices.head} {paths} with `docker save | ssh "
            f"… docker load` ({', '.join(copies)} {reach} the internet only through a jump host)"
        )
    result.notes.append(f"image: {wanted} " + "; ".join(said))


def _pull_step(host: str, image: str) -> DeployStep:
    return DeployStep(
        kind="pull",
        id=f"pull:{host}",
        title=f"pull {image}",
        host=host,
        actions=[f"docker pull {image}"],
        check=_image_listed(host, image, f"{image} is listed"),
        rollback=f"docker rmi {image}",
        job=PULL_JOB,
    )


def _image_listed(host: str, image: str, description: str) -> StepCheck:
    """The check after an image arrives on `host`, by a pull or a copy."""
    return StepCheck(
        host=host,
        command="docker images --format '{{.Repository}}:{{.Tag}}'",
        expect=f"^{re.escape(image)}$",
        description=description,
    )


def _copy_image_step(
    head: str,
    host: str,
    image: str,
    data: ProvisionInput,
    head_pulls: bool,
    replaces: str | None = None,
) -> DeployStep:
    """The head's image to `host`: where it has none (no internet there), or in place of
    `replaces`, the ID of another build under the same tag (then the check wants the head's ID
    and the rollback tags the old build back)."""
    # the address is written out: a word read at run time in an ssh command line could turn
    # into one of ssh's options (the shell judge says so)
    address, path = _route(data, host, read_later=False)
    why, check = "(no internet there)", _image_listed(host, image, f"{image} is listed on {host}")
    rollback = f"docker rmi {image} on {host}"
    head_image = _image(data.hosts[head], image)
    if replaces is not None and head_image is not None and head_image.id:
        why = f"(its {image} is {replaces[:12]}, the head's {head_image.id[:12]})"
        check = StepCheck(
            host=host,
            command="docker images --format '{{.Repository}}:{{.Tag}} {{.ID}}'",
            expect=f"^{re.escape(image)} {re.escape(head_image.id[:12])}",
            description=f"{image} on {host} is the head's ({head_image.id[:12]})",
        )
        rollback = f"docker tag {replaces[:12]} {image} on {host}"
    return DeployStep(
        kind="image-copy",
        id=f"image-copy:{host}",
        title=f"copy {image} from {head} to {host} {path} {why}",
        host=head,
        actions=[f"docker save {image} | ssh {address} docker load"],
        check=check,
        rollback=rollback,
        needs=[f"pull:{head}"] if head_pulls else [],
        job=f"copy-image-{host}",
    )


def _image_checks(data: ProvisionInput, choices: DeployChoices, result: Provision) -> None:
    """Ask the image what it runs where it was not asked yet, once it is there: once per image,
    since a node whose copy has the same ID as another's (or is the head's, sent with `docker
    save | docker load`, which keeps the ID) holds the same files."""
    wanted = image_name(choices.image or "")
    engine = "sglang" if choices.recipe == "sglang" else "vllm"
    arrivals = {s.id for s in result.steps if s.kind in ("image-build", "pull", "image-copy")}
    asked: dict[str, str] = {}  # the image's identity -> the node it is asked on
    same: list[str] = []
    arriving = False
    head_key = _identity(_image(data.hosts[choices.head], wanted), choices.head)
    for host in choices.hosts:
        image = _image(data.hosts[host], wanted)
        if image is not None and image.contents is not None:
            continue
        copied = f"image-copy:{host}" in arrivals
        key = head_key if copied else _identity(image, host)
        if key in asked:
            same.append(host)
            continue
        asked[key] = host
        ways = (f"build:{host}", f"pull:{host}", f"image-copy:{host}")
        arrival = [i for i in ways if i in arrivals]
        arriving = arriving or bool(arrival)
        result.steps.append(
            DeployStep(
                kind="image-check",
                id=f"image-check:{host}",
                title=f"ask {wanted} what it runs",
                host=host,
                actions=[contents_command([wanted])],
                check=job_log_check(
                    host, IMAGE_CHECK_JOB, f"the image holds {engine}", f"^Name: {engine}$"
                ),
                rollback="none (a throwaway container)",
                needs=arrival,
                job=IMAGE_CHECK_JOB,
            )
        )
    if asked:
        where = ", ".join(asked.values())
        when = ", after it arrives" if arriving else ""
        also = f"; {', '.join(same)} has the same image" if same else ""
        result.notes.append(
            f"image contents: asked on {where} (`pip show` in a throwaway container{when})"
            f"{also}; the engine needs {engine} in it"
        )


def _identity(image: Image | None, host: str) -> str:
    """What makes two nodes' copies the same image: the ID recon saw; else the node's own (an
    image pulled there may differ, if its tag moved between pulls)."""
    return image.id if image is not None and image.id else f"node:{host}"


def _weights(data: ProvisionInput, choices: DeployChoices, result: Provision) -> None:
    need = [h for h in choices.hosts if h in data.need_weights]
    if not need:
        result.notes.append(f"weights: {choices.model} is complete in every node's cache")
        return
    head = choices.head
    if head in need and data.gated and not data.token_present:
        result.blockers.append(
            Finding(
                severity="blocker",
                check="weights",
                kind="gated_no_token",
                hosts=[head],
                message=f"{choices.model} is gated on the Hugging Face Hub and Scout's "
                "environment has no HF_TOKEN, so the download would fail (401, GatedRepoError)",
                fix="accept the model's terms on its Hub page, then start Scout with HF_TOKEN "
                "set to a token of that account (it is passed to the download job, never shown)",
            )
        )
        return
    directory = cache_dir(choices.model, choices.hf_cache)
    if head in need:
        result.steps.append(
            DeployStep(
                kind="download",
                id=f"download:{head}",
                title=f"download {choices.model} into {head}'s HF cache",
                host=head,
                actions=[f"hf download {choices.model}"],
                check=job_log_check(
                    head,
                    DOWNLOAD_JOB,
                    "the download job printed the snapshot folder",
                    re.escape(directory.rsplit("/", 1)[-1]) + "/snapshots/",
                ),
                rollback=f"rm -rf {directory}",
                job=DOWNLOAD_JOB,
                operator_env=["HF_TOKEN"] if data.gated else [],
            )
        )
    workers = [h for h in need if h != head]
    paths = set()
    for worker in workers:
        address, path = _route(data, worker, read_later=True)
        paths.add(path)
        result.steps.append(
            DeployStep(
                kind="copy",
                id=f"copy:{worker}",
                title=f"copy the weights to {worker} {path}",
                host=head,
                actions=[f"rsync -a --mkpath --info=progress2 {directory}/ {address}:{directory}/"],
                check=job_log_check(head, f"copy-weights-{worker}", "rsync reached 100%", r"100%"),
                rollback=f"rm -rf {directory} on {worker}",
                needs=[f"download:{head}"] if head in need else [],
                job=f"copy-weights-{worker}",
            )
        )
    said = []
    if head in need:
        token = " with HF_TOKEN from the operator's environment" if data.gated else ""
        said.append(f"downloaded on {head} as a job{token}")
    if workers:
        said.append(f"then copied {' and '.join(sorted(paths))} to {', '.join(workers)} with rsync")
    result.notes.append(f"weights: {choices.model} " + ", ".join(said))


def _contents(data: ProvisionInput, choices: DeployChoices, host: str) -> ImageContents | None:
    """The image's probed contents on `host`, else on any node that has the same image."""
    wanted = image_name(choices.image or "")
    order = [host, *(h for h in choices.hosts if h != host)]
    for name in order:
        image = _image(data.hosts[name], wanted)
        if image is not None and image.contents is not None:
            return image.contents
    return None


def _ray(data: ProvisionInput, choices: DeployChoices, result: Provision) -> None:
    lacking: dict[str, str] = {}
    for host in choices.hosts:
        contents = _contents(data, choices, host)
        if contents is None:
            lacking[host] = "not probed"
        elif contents.ray is None:
            lacking[host] = "absent"
    if not lacking:
        result.notes.append("Ray: in the image on every node (probed)")
        return
    states = {state: [h for h, s in lacking.items() if s == state] for state in lacking.values()}
    why = "; ".join(f"{state} on {', '.join(hosts)}" for state, hosts in states.items())
    offline = [h for h in lacking if h in data.offline]
    if offline:
        result.recipe = "vllm-multinode"
        probed = all(state == "absent" for state in lacking.values())
        whatever = "" if probed else ", whatever the image check finds"
        result.notes.append(
            f"Ray: not known to be in the image ({why}) and {', '.join(offline)} cannot pip "
            f"install it (no internet there): vLLM's multiprocess recipe (no Ray) instead{whatever}"
        )
        return
    result.install_ray = frozenset(lacking)
    result.notes.append(
        f"Ray: not known to be in {choices.image} ({why}): installed into the container "
        "before `ray start`, as NVIDIA's two-Spark playbook does"
    )
