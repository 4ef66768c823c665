"""Write agent/safety/shell/verb_tables.py from the sources of the programs that take a prefix
of a verb (issue 36, item 3): the gate expands `nmcli c m` and `ip l s` with the program's
own tables, read here from its C source, not with a list written by hand.

nmcli: every `NMCCommand NAME[] = {...}` table in src/nmcli/*.c, each joined to the function
that owns it or hands it to nmc_do_cmd, walked from nmcli.c's `nmcli_cmds`.
ip, bridge (iproute2): PROGRAM/PROGRAM.c's `cmds[]`, and for each object the words its `do_*`
function tests, in order, with `matches()` (any prefix) or `strcmp()` (the whole word); a test
against a loop over a table of the object's own file (`matches(argv[0], cmds[i].name)`, as
ip/tcp_metrics.c does) takes that table's names, in its order. A verb whose block in the do_*
function takes the next word and tests it again (`ip mptcp endpoint show`, `ip sr tunsrc set`)
gets those words too, with the one run when none follows (the word whose branch calls the
function the `argc == 0` branch calls, with the same arguments but the words'), or "" where
none is run.

    python scripts/extract_verb_tables.py NETWORKMANAGER_GIT IPROUTE2_GIT [--check]

Each argument is a git directory (a clone or a bare mirror); HEAD is read. `--check` exits 1
when the committed module differs from what the sources give.
"""

from __future__ import annotations

import argparse
import pprint
import re
import subprocess
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "agent/safety/shell/verb_tables.py"
NMC_TABLE = re.compile(r"NMCCommand\s+(\w+)\[\]\s*=\s*\{(.*?)\n\s*\};", re.S)
NMC_ENTRY = re.compile(r'\{\s*(?:"([^"]+)"|NULL)\s*,\s*(\w+)')
NMC_DO_CMD = re.compile(r"nmc_do_cmd\([^,]+,\s*(\w+)\s*,")
C_FUNCTION = re.compile(r"^(?:[A-Za-z_][\w \t*]*[ \t*])?(\w+)\s*\([^;{}()]*\)\s*\{", re.M)
IP_ENTRY = re.compile(r'\{\s*"([^"]+)"\s*,\s*(\w+)\s*\}')
IPROUTE2_PROGRAMS = ("ip", "bridge")
IP_BLOCK = re.compile(
    r'\bif\s*\(\s*(?:matches|strcmp)\(\s*(?:\*argv|argv\[0\])\s*,\s*"([^"]+)"\s*\)\s*==\s*0\s*\)\s*\{'
)
IP_NO_WORD_CALL = re.compile(r"\bif\s*\(\s*argc\s*==\s*0\s*\)\s*return\s+(\w+)\(([^;]*)\);")
IP_WORD_CALL = re.compile(
    r'\bif\s*\(\s*(?:matches|strcmp)\(\s*\*argv\s*,\s*"([^"]+)"\s*\)\s*==\s*0\s*\)'
    r"\s*return\s+(\w+)\(([^;]*)\);"
)
IP_WORD = re.compile(
    r'\b(matches|strcmp)\(\s*(?:\*argv|argv\[0\])\s*,\s*(?:"([^"]+)"|(\w+)\[\w+\]\.name)\s*\)'
)


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def function_bodies(text: str) -> dict[str, str]:
    """Each top-level C function's name and text, up to its closing brace in column one."""
    bodies = {}
    for match in C_FUNCTION.finditer(text):
        end = text.find("\n}", match.end())
        bodies[match.group(1)] = text[match.start() : len(text) if end < 0 else end + 2]
    return bodies


def nmcli_tables(repo: str) -> dict[str, object]:
    """nmcli's command tree: {object: {verb: subtree}}, in nmcli's order, with the verb run
    when none is given under the key "" (as the table's NULL entry names it)."""
    files = git(repo, "ls-tree", "--name-only", "HEAD", "src/nmcli/").split()
    tables: dict[str, list[tuple[str, str]]] = {}
    owner: dict[str, str] = {}  # function -> table it dispatches through
    for path in (name for name in files if name.endswith(".c")):
        text = git(repo, "show", f"HEAD:{path}")
        bodies = function_bodies(text)
        for match in NMC_TABLE.finditer(text):
            key = f"{path}:{match.start()}:{match.group(1)}"
            tables[key] = NMC_ENTRY.findall(match.group(2))
            inside = [n for n, body in bodies.items() if match.group(0) in body]
            for function in inside:
                owner[function] = key
            for function, body in bodies.items():
                if re.search(rf"nmc_do_cmd\([^,]+,\s*{match.group(1)}\s*,", body):
                    owner.setdefault(function, key)
    root = next(key for key in tables if key.endswith(":nmcli_cmds"))

    def tree(key: str, seen: frozenset[str]) -> dict[str, object]:
        node: dict[str, object] = {}
        default = ""
        for verb, func in tables[key]:
            sub = owner.get(func)
            child = tree(sub, seen | {key}) if sub and sub not in seen and sub != key else {}
            if not verb:  # the NULL entry: what runs when no verb is given
                default = next((v for v, f in tables[key] if v and f == func), "")
            else:
                node[verb] = child
        return {**node, "": default} if node else {}

    return tree(root, frozenset())


def ip_tables(
    repo: str, program: str = "ip"
) -> tuple[tuple[str, ...], dict[str, tuple[tuple[str, bool], ...]]]:
    """An iproute2 program's objects in its order (PROGRAM/PROGRAM.c's cmds[]), and per object
    the words its function tests, each with True where any prefix of it is taken (`matches`)
    and False where only the whole word."""
    main_c = git(repo, "show", f"HEAD:{program}/{program}.c")
    table = re.search(r"cmds\[\]\s*=\s*\{(.*?)\n\};", main_c, re.S)
    if table is None:
        raise SystemExit(f"{program}/{program}.c: no cmds[] table")
    entries = IP_ENTRY.findall(table.group(1))
    bodies: dict[str, tuple[str, str]] = {}  # function: (its text, its file's text)
    for path in git(repo, "ls-tree", "--name-only", "HEAD", f"{program}/").split():
        if path.endswith(".c"):
            source = git(repo, "show", f"HEAD:{path}")
            bodies.update((f, (body, source)) for f, body in function_bodies(source).items())
    verbs: dict[str, tuple[tuple[str, bool], ...]] = {}
    for name, func in entries:
        body, source = bodies.get(func, ("", ""))
        seen: dict[str, bool] = {}
        for kind, word, table in IP_WORD.findall(body):
            for each in [word] if word else file_table(source, table):
                seen.setdefault(each, kind == "matches")
        verbs[name] = tuple(seen.items())
    return tuple(name for name, _ in entries), verbs


def file_table(source: str, name: str) -> list[str]:
    """The names of a C file's `NAME[] = { { "word", CODE }, ... }` table, in its order."""
    table = re.search(rf"\b{name}\[\]\s*=\s*\{{(.*?)\n\}};", source, re.S)
    return [word for word, _ in IP_ENTRY.findall(table.group(1))] if table else []


Subverbs = dict[str, dict[str, tuple[tuple[tuple[str, bool], ...], str]]]


def ip_subverbs(repo: str, program: str = "ip") -> Subverbs:
    """Per object, the verbs whose block takes the next word and tests it: {object: {verb:
    (words in order with True for any prefix, the word run when none follows or "")}}."""
    main_c = git(repo, "show", f"HEAD:{program}/{program}.c")
    table = re.search(r"cmds\[\]\s*=\s*\{(.*?)\n\};", main_c, re.S)
    entries = IP_ENTRY.findall(table.group(1)) if table else []
    bodies: dict[str, str] = {}
    for path in git(repo, "ls-tree", "--name-only", "HEAD", f"{program}/").split():
        if path.endswith(".c"):
            bodies.update(function_bodies(git(repo, "show", f"HEAD:{path}")))
    found: Subverbs = {}
    for name, func in entries:
        body = bodies.get(func, "")
        inner = body[body.find("{") + 1 : body.rfind("}")]
        for block in IP_BLOCK.finditer(inner):
            if _depth(inner[: block.start()]) != 0:
                continue
            text = _outer(inner[block.end() : _block_end(inner, block.end())])
            if "NEXT_ARG" not in text:
                continue
            words: dict[str, bool] = {}
            for kind, word, _ in IP_WORD.findall(text):
                if word:
                    words.setdefault(word, kind == "matches")
            if words:
                found.setdefault(name, {})[block.group(1)] = (tuple(words.items()), _default(text))
    return found


def _depth(text: str) -> int:
    return text.count("{") - text.count("}")


def _block_end(text: str, start: int) -> int:
    """Where the block whose `{` ends just before `start` closes."""
    depth = 1
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index
    return len(text)


def _outer(text: str) -> str:
    """`text` without what its nested blocks hold: the tests made at its own level."""
    kept, depth = [], 0
    for char in text:
        depth -= char == "}"
        if depth == 0:
            kept.append(char)
        depth += char == "{"
    return "".join(kept)


def _default(block: str) -> str:
    """The word whose branch does what the block does with no word left: the same function,
    called with the same arguments apart from the words (0, NULL, argc…, argv…)."""

    def call(function: str, arguments: str) -> tuple[str, tuple[str, ...]]:
        kept = [a.strip() for a in arguments.split(",")]
        return function, tuple(a for a in kept if not re.fullmatch(r"0|NULL|(argc|argv)(\W.*)?", a))

    none = IP_NO_WORD_CALL.search(block)
    if none is None:
        return ""
    wanted = call(none.group(1), none.group(2))
    return next((word for word, f, a in IP_WORD_CALL.findall(block) if call(f, a) == wanted), "")


def module_text(nm_repo: str, ip_repo: str) -> str:
    nm_commit = git(nm_repo, "rev-parse", "HEAD").strip()
    ip_commit = git(ip_repo, "rev-parse", "HEAD").strip()
    tables = {program: ip_tables(ip_repo, program) for program in IPROUTE2_PROGRAMS}
    # packed as pprint packs them, between fmt: off and on: one entry a line would make a module
    # of 500 lines out of three tables
    fmt = pprint.PrettyPrinter(width=99, sort_dicts=False, compact=True).pformat
    return (
        '"""Verb tables of programs that take a prefix of a verb, extracted from their own\n'
        "sources by scripts/extract_verb_tables.py: generated, do not edit by hand.\n\n"
        f"nmcli: NetworkManager/NetworkManager@{nm_commit},\nsrc/nmcli/*.c (the "
        "NMCCommand tables; nmc_do_cmd takes the first entry matches() accepts, in\n"
        'src/libnmc-base/nm-client-utils.c). The key "" names the verb run when none is given.\n'
        f"ip and bridge: iproute2/iproute2@{ip_commit},\nip/ip.c and bridge/bridge.c cmds[] and "
        "each object's do_* function (matches() in lib/utils.c: True;\nstrcmp(): False); "
        "IPROUTE2_SUBVERBS: the words a verb's block tests next, and the one\nrun when none "
        'follows ("": none).\n'
        '"""\n\n'
        "from __future__ import annotations\n\n"
        f'NMCLI_SOURCE = "https://github.com/NetworkManager/NetworkManager/tree/{nm_commit}"\n'
        f'IP_SOURCE = "https://github.com/iproute2/iproute2/tree/{ip_commit}"\n'
        "# fmt: off\n"
        f"NMCLI_COMMANDS: dict[str, object] = (\n{fmt(nmcli_tables(nm_repo))}\n)\n"
        "IPROUTE2_OBJECTS: dict[str, tuple[str, ...]] = (\n"
        f"{fmt({program: objects for program, (objects, _) in tables.items()})}\n)\n"
        "IPROUTE2_VERBS: dict[str, dict[str, tuple[tuple[str, bool], ...]]] = (\n"
        f"{fmt({program: verbs for program, (_, verbs) in tables.items()})}\n)\n"
        "IPROUTE2_SUBVERBS: dict[str, dict[str, dict[str, tuple[tuple[tuple[str, bool], ...], "
        "str]]]] = (\n"
        f"{fmt({program: ip_subverbs(ip_repo, program) for program in IPROUTE2_PROGRAMS})}\n)\n"
        "# fmt: on\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("networkmanager")
    parser.add_argument("iproute2")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = subprocess.run(  # the house format, so the committed file is exactly this output
        [sys.executable, "-m", "ruff", "format", "-"],
        input=module_text(args.networkmanager, args.iproute2),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    if args.check:
        same = OUTPUT.exists() and OUTPUT.read_text() == text
        print(f"{OUTPUT.name}: {'matches' if same else 'differs from'} the sources")
        return 0 if same else 1
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
