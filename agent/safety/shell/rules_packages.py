"""Rules for package tools and interpreters: pip, uv, python, apt, dpkg.

Listing packages reads; installing, removing or running code does not. Options that set
configuration (`apt -o`, `pip --python`, `pip --log`) are judged for what they do: apt's `-o`
can add hooks that run commands. Python code given with `-c` is not read, only recognised: the
scripts Scout itself runs to read (KNOWN_SCRIPTS), by their exact text, run with `-B` (no
bytecode written); any other code runs as code.
"""

from __future__ import annotations

from agent.safety.shell.endpoints import endpoint_problem
from agent.safety.shell.options import Parsed, grammar, read_args, word_set
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    destructive,
    judge_options,
    mutating,
    option_effects,
    read_only,
    written_file,
)
from agent.safety.shell.shell_words import RuntimeText
from tools.recon.installed_packages import INSTALLED_PACKAGES_SCRIPT

KNOWN_SCRIPTS = {
    INSTALLED_PACKAGES_SCRIPT: "lists the installed packages from their metadata",
}

PIP_GLOBAL = (
    "-h|--help --debug --isolated -v|--verbose -V|--version -q|--quiet --log=:w --no-input "
    "--keyring-provider= --proxy= --retries= --timeout= --exists-action= --trusted-host= "
    "--cert= --client-cert= --cache-dir= --no-cache-dir --disable-pip-version-check "
    "--no-color --no-python-version-warning --use-feature= --use-deprecated= --python=:x "
    "--require-virtualenv --resume-retries= "
)
PIP = grammar(PIP_GLOBAL, stop_at_positional=True)
PIP_READ_OPTIONS = grammar(
    PIP_GLOBAL + "-o|--outdated -u|--uptodate -e|--editable -l|--local --user --path= --pre "
    "--format= --not-required --exclude-editable --include-editable --exclude= "
    "-i|--index-url= --extra-index-url= --no-index -f|--find-links= --files "
    "-r|--requirement= --all --global --site --editor= --platform= --python-version= "
    "--implementation= --abi= --only-binary= -a|--algorithm="
)
PIP_READ = frozenset({"list", "show", "freeze", "check", "help", "debug", "inspect", "search",
                      "index", "config", "cache", "hash"})  # fmt: skip
PIP_CONFIG_READ = frozenset({"list", "get", "debug"})
PIP_CACHE_READ = frozenset({"dir", "info", "list"})
APT = grammar(
    "-h|--help -v|--version -q|--quiet -s|--simulate|--dry-run|--just-print|--no-act|--recon "
    "-y|--yes|--assume-yes --assume-no -a|--all-versions --installed --upgradable "
    "--manual-installed --names-only -n --full -f|--full -i|--important --recurse "
    "--no-all-versions --no-pre-depends --no-depends --no-recommends --no-suggests "
    "--no-conflicts --no-breaks --no-replaces --no-enhances -g|--generate --no-generate "
    "-p|--pkg-cache=:w --src-cache=:w -t|--target-release= --color --no-color "
    "-c|--config-file=:x -o|--option=:x"
)
APT_READ = frozenset({"list", "show", "search", "policy", "depends", "rdepends", "changelog",
                      "help", "showsrc", "showpkg", "madison", "pkgnames", "dump", "dumpavail",
                      "unmet", "stats", "xvcg", "dotty", "showauto", "showmanual",
                      "showhold", "download-uris"})  # fmt: skip
DPKG_READ = word_set(
    "-l --list -s --status -L --listfiles -S --search -p --print-avail --print-architecture "
    "--print-foreign-architectures --get-selections --version --compare-versions -C --audit "
    "-V --verify -c --contents -I --info -f --field --help -W --show --control-path "
    "--control-list --control-show"
)
DPKG_OPTIONS = grammar(
    "--admindir= --root= --instdir= -f|--showformat= --no-pager -D|--debug= --log=:w "
    "--verify-format= --load-avail",
)
JSON_TOOL = grammar("--sort-keys --indent= --no-indent --tab --compact --no-ensure-ascii "
                    "--json-lines -h|--help")  # fmt: skip


def _pip(name: str, args: list[str]) -> list[Outcome]:
    why = {"--python": "runs another interpreter"}
    parsed, found = judge_options(name, args, PIP, why=why)
    if found:
        return found
    words = parsed.rest
    if not words:
        if parsed.has("-V", "-h"):
            return read_only(f"'{name} --version' prints a version")
        return mutating(f"'{name}' without a command")
    verb = words[0]
    if verb == "uninstall":
        return destructive(f"'{name} uninstall' removes packages")
    if verb == "cache" and words[1:2] and words[1] in ("remove", "purge"):
        return destructive(f"'{name} cache {words[1]}' deletes cached packages")
    subverb_ok = {"config": PIP_CONFIG_READ, "cache": PIP_CACHE_READ}.get(verb)
    if verb in PIP_READ and (subverb_ok is None or (words[1:2] and words[1] in subverb_ok)):
        verb_parsed, found = judge_options(f"{name} {verb}", words[1:], PIP_READ_OPTIONS, why=why)
        found += _indexes(name, [parsed, verb_parsed])
        return found or read_only(f"'{name} {verb}' only reads")
    return mutating(f"'{name} {verb}' changes installed packages")


def _indexes(name: str, parsed: list[Parsed]) -> list[Outcome]:
    """An index or proxy named on the line gets pip's stored credentials for it."""
    found: list[Outcome] = []
    for option in ("-i", "--extra-index-url", "--proxy"):
        for value in (v for p in parsed for v in p.values(option)):
            if problem := endpoint_problem(value, f"'{name} {option}' asks"):
                found += mutating(problem)
    return found


def _uv(name: str, args: list[str]) -> list[Outcome]:
    if args in (["--version"], ["-V"], ["version"], ["--help"]):
        return read_only("'uv --version' prints a version")
    if (
        args[:1] == ["pip"]
        and len(args) > 1
        and args[1] in ("list", "show", "freeze", "check", "tree")
    ):
        return _pip("uv pip", args[1:])
    return mutating(f"'uv {args[0] if args else ''}' changes packages or runs code")


def _python(name: str, args: list[str]) -> list[Outcome]:
    if args[:1] and args[0] in ("--version", "-V", "-VV") and len(args) == 1:
        return read_only(f"'{name} --version' prints a version")
    if args[:2] == ["-m", "json.tool"]:
        parsed, found = judge_options(f"{name} -m json.tool", args[2:], JSON_TOOL)
        if found:
            return found
        if len(parsed.positionals) >= 2:
            return written_file(f"{name} -m json.tool OUTFILE", parsed.positionals[1]) or (
                read_only(f"'{name} -m json.tool' only formats JSON")
            )
        return read_only(f"'{name} -m json.tool' only formats JSON")
    if args[:2] in (["-m", "pip"], ["-m", "pip3"]):
        return _pip("pip", args[2:])
    if (
        len(args) == 3
        and args[:2] == ["-B", "-c"]
        and not isinstance(args[2], RuntimeText)
        and args[2] in KNOWN_SCRIPTS
    ):
        return read_only(f"'{name} -B -c' runs Scout's own script that {KNOWN_SCRIPTS[args[2]]}")
    if args[:1] == ["-c"] or args[1:2] == ["-c"]:
        return mutating(f"'{name} -c' runs Python code")
    return mutating(f"'{name}' runs a program")


def _apt(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(
        name,
        args,
        APT,
        why={
            "-o": "sets options that can add hooks",
            "-c": "reads a config that can add hooks",
            "-p": "writes the package cache to a file",
            "--src-cache": "writes a cache file",
        },
    )
    if found:
        return found
    words = parsed.positionals
    verb = words[0] if words else ""
    if isinstance(verb, RuntimeText):
        return mutating(f"'{name} {verb}': the command is only known at run time")
    if name == "apt-cache" and verb and verb != "gencaches":
        return read_only(f"'apt-cache {verb}' only reads")
    if verb in APT_READ or (name == "apt-get" and parsed.has("-s") and verb != ""):
        return read_only(f"'{name} {verb}' only reads")
    if verb in ("remove", "purge", "autoremove", "autopurge"):
        return destructive(f"'{name} {verb}' removes packages")
    return mutating(f"'{name} {verb}' changes packages or package lists")


def _dpkg(name: str, args: list[str]) -> list[Outcome]:
    if any(a in ("-r", "-P", "--remove", "--purge") for a in args):
        return destructive("'dpkg -r/-P' removes packages")
    actions = [a for a in args if a in DPKG_READ]
    others = [a for a in args if a.startswith("-") and a not in DPKG_READ]
    parsed = read_args(others, DPKG_OPTIONS)
    if actions and not parsed.problem and not any(isinstance(a, RuntimeText) for a in args):
        return option_effects(name, parsed) or read_only(f"'{name} {actions[0]}' only reads")
    if parsed.problem:
        return mutating(f"'{name}': {parsed.problem}")
    return mutating(f"'{name}' changes packages")


def package_rules() -> dict[str, ProgramRule]:
    rules: dict[str, ProgramRule] = dict.fromkeys(("pip", "pip3"), _pip)
    rules.update(dict.fromkeys(("python", "python3"), _python))
    rules.update(dict.fromkeys(("apt", "apt-get", "apt-cache"), _apt))
    rules.update({"uv": _uv, "dpkg": _dpkg, "dpkg-query": _dpkg})
    return rules
