"""Print each class of issue 36's item 3 (the gate, where it was aimed at) with the tests that
hold it and how many cases each runs: the cases are collected by pytest, and the abbreviation
classes are counted from the programs' own tables (agent/safety/shell/verb_tables.py).

    python scripts/gate_classes.py [--cases]

`--cases` also lists every abbreviation the tables give, with the verb it expands to and the
label the gate gives it. Exit status 1 when a named test no longer exists.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.safety.shell.abbreviations import (  # noqa: E402
    iproute2_object,
    iproute2_verb,
    nmcli_expand,
)
from agent.safety.shell.judge import judge_shell  # noqa: E402
from agent.safety.shell.verb_tables import (  # noqa: E402
    IP_SOURCE,
    IPROUTE2_OBJECTS,
    IPROUTE2_VERBS,
    NMCLI_COMMANDS,
    NMCLI_SOURCE,
)

ALIASES = "tests/unit/test_gate_aliases.py"
ABBREVIATIONS = "tests/unit/test_abbreviations.py"
CLASSES = "tests/unit/test_policy_classes.py"
CHANNELS = "tests/system/test_wall_channels.py"
REAL_SSHD = "tests/system/test_wall_real_sshd.py"
# (class, tests): each test a file::function whose cases pytest collects.
ITEM_3 = (
    ("paths through the kernel's aliases (/proc/*/root, cwd, fd, map_files, ..)",
     (f"{ALIASES}::test_a_device_reached_through_a_kernel_alias_is_judged_as_the_device",
      f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[devices]")),
    ("paths through symlinks: the kernel resolves them, the wall judges the file reached",
     (f"{CHANNELS}::test_a_device_behind_a_symlink_does_not_open",
      f"{CHANNELS}::test_devices_beyond_the_read_safe_list_do_not_open")),
    ("globs that may match a device or a kernel file",
     ("tests/unit/test_policy_glob_reads.py::test_a_glob_in_a_folder_known_only_at_run_time_asks",
      f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[devices]")),
    ("a request judged by what the server receives (--request-target, method headers, -X, -d)",
     (f"{ALIASES}::test_a_request_is_judged_by_what_the_server_receives",
      f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[serving]",
      f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[endpoints]")),
    (f"nmcli verbs abbreviated, expanded by nmcli's table ({NMCLI_SOURCE})",
     (f"{ABBREVIATIONS}::test_an_abbreviated_nmcli_verb_gets_the_label_of_the_verb_nmcli_runs",
      f"{ABBREVIATIONS}::test_nmcli_takes_the_first_entry_a_word_begins")),
    (f"ip and bridge objects and verbs abbreviated, expanded by their tables ({IP_SOURCE})",
     (f"{ABBREVIATIONS}::test_an_abbreviated_iproute2_verb_gets_the_label_of_the_verb_it_runs",
      f"{ABBREVIATIONS}::test_iproute2_takes_the_first_test_a_word_passes",
      f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[netns_exec]")),
    ("config a repository or user sets that runs a program (git)",
     (f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[git_config]",
      f"{REAL_SSHD}::test_a_repository_config_runs_no_program_in_a_walled_git_read")),
    ("data that reaches a shell as code (find -exec sh -c '… {}')",
     (f"{ALIASES}::test_what_find_puts_in_place_of_braces_is_judged",
      f"{CLASSES}::test_no_form_of_a_state_changing_class_is_read_only[find]")),
)  # fmt: skip


def collected(files: set[str]) -> Counter[str]:
    """How many cases pytest collects per test (`file::function`, or with its one id)."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *sorted(files)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    counts: Counter[str] = Counter()
    for line in out.splitlines():
        if "::" in line:
            counts[line.split("[", 1)[0]] += 1
            counts[line] += 1
    return counts


def described(test: str, count: int) -> str:
    """A test's cases; for a class of generated forms, how many forms it judges."""
    if not count:
        return "MISSING"
    if test.startswith(CLASSES) and test.endswith("]"):
        from tests.unit.test_policy_classes import STATE_CHANGING

        return f"{sum(1 for _ in STATE_CHANGING[test.rsplit('[', 1)[1][:-1]]())} forms"
    return f"{count} case{'s' * (count != 1)}"


def shortest(word: str, expand: Callable[[str], str | None]) -> str | None:
    """The shortest prefix of `word` the program's rule expands to `word` (None: none)."""
    return next((word[:n] for n in range(1, len(word) + 1) if expand(word[:n]) == word), None)


def abbreviation_cases() -> list[str]:
    """Every shortest abbreviation the tables give, the verb it runs and the gate's label."""
    lines = []

    def walk(node: dict[str, object], path: list[str], short: list[str]) -> None:
        names = [name for name in node if name]
        for verb in names:
            cut = shortest(verb, lambda w, names=names: nmcli_expand(w, names)) or verb
            words = [*short, cut]
            label = judge_shell(" ".join(["nmcli", *words])).risk.name.lower()
            lines.append(f"  nmcli {' '.join(words)} -> {' '.join([*path, verb])}: {label}")
            walk(node[verb], [*path, verb], words)  # type: ignore[arg-type]

    walk(NMCLI_COMMANDS, [], [])
    for program, objects in IPROUTE2_OBJECTS.items():
        for obj in objects:
            short_obj = shortest(obj, lambda w, p=program: iproute2_object(p, w)) or obj
            for verb, _ in IPROUTE2_VERBS[program][obj]:
                cut = shortest(verb, lambda w, p=program, o=obj: iproute2_verb(p, o, w))
                if cut is not None:
                    label = judge_shell(f"{program} {short_obj} {cut} dev x").risk.name.lower()
                    lines.append(f"  {program} {short_obj} {cut} -> {obj} {verb}: {label}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true")
    args = parser.parse_args()
    counts = collected({test.split("::")[0] for _, tests in ITEM_3 for test in tests})
    missing = []
    for number, (name, tests) in enumerate(ITEM_3, 1):
        print(f"{number}. {name}")
        for test in tests:
            count = counts.get(test, 0)
            missing += [test] if count == 0 else []
            print(f"   - {test}: {described(test, count)}")
    cases = abbreviation_cases()
    print(
        f"abbreviations the tables give: {len(cases)} (nmcli, ip, bridge), each judged as its verb"
    )
    if args.cases:
        print("\n".join(cases))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
