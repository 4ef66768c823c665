"""scripts/extract_verb_tables.py reads the tables as the programs lay them out: nmcli's
NMCCommand tables joined to the function that owns or dispatches them (in order, with the
NULL entry's verb as the default), ip's objects and the words each do_* function tests."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "scripts/extract_verb_tables.py"
NMCLI_C = """
static void
nmc_command_func_thing(const NMCCommand *cmd, NmCli *nmc, int argc, const char *const *argv)
{
    static const NMCCommand cmds[] = {
        {"show", do_thing_show, usage, TRUE, TRUE},
        {"sub", do_thing_sub, usage, TRUE, TRUE},
        {"set", do_thing_set, usage, TRUE, TRUE},
        {NULL, do_thing_show, usage, TRUE, TRUE},
    };
    nmc_do_cmd(nmc, cmds, *argv, argc, argv);
}

static NMCCommand sub_cmds[] = {
    {"list", do_sub_list, NULL, TRUE, TRUE},
    {NULL, do_sub_list, NULL, TRUE, TRUE},
};

static void
do_thing_sub(const NMCCommand *cmd, NmCli *nmc, int argc, const char *const *argv)
{
    nmc_do_cmd(nmc, sub_cmds, *argv, argc, argv);
}

static void
process_command_line(NmCli *nmc, int argc, char **argv_orig)
{
    static const NMCCommand nmcli_cmds[] = {
        {"thing", nmc_command_func_thing, NULL, FALSE, FALSE},
        {NULL, nmc_command_func_overview, usage, TRUE, TRUE},
    };
}
"""
IP_C = """
static const struct cmd {
	const char *cmd;
	int (*func)(int argc, char **argv);
} cmds[] = {
	{ "link",	do_iplink },
	{ "l2tp",	do_ipl2tp },
	{ 0 }
};
"""
IPLINK_C = """
int do_iplink(int argc, char **argv)
{
	if (matches(*argv, "add") == 0)
		return 1;
	if (strcmp(*argv, "chg") == 0 || matches(*argv, "show") == 0)
		return 2;
	return 0;
}
"""


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("extract_verb_tables", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def repo(path: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    run = ["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run([*run, "add", "."], check=True)
    subprocess.run([*run, "commit", "-qm", "sources"], check=True)
    return str(path / ".git")


def test_nmcli_tables_are_joined_into_one_tree_in_nmclis_order(tmp_path: Path) -> None:
    git_dir = repo(tmp_path, {"src/nmcli/nmcli.c": NMCLI_C})
    tree = load_script().nmcli_tables(git_dir)
    assert tree == {
        "thing": {"show": {}, "sub": {"list": {}, "": "list"}, "set": {}, "": "show"},
        "": "",
    }
    assert list(tree["thing"]) == ["show", "sub", "set", ""]


def test_ip_objects_and_the_words_their_functions_test(tmp_path: Path) -> None:
    git_dir = repo(tmp_path, {"ip/ip.c": IP_C, "ip/iplink.c": IPLINK_C})
    objects, verbs = load_script().ip_tables(git_dir, "ip")
    assert objects == ("link", "l2tp")
    assert verbs == {"link": (("add", True), ("chg", False), ("show", True)), "l2tp": ()}


IPL2TP_C = """
static const struct {
	const char *name;
	int	code;
} cmds[] = {
	{	"list",		1	},
	{	"flush",	2	},
};

int do_ipl2tp(int argc, char **argv)
{
	if (matches(*argv, "add") == 0)
		return 1;
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (matches(argv[0], cmds[i].name) == 0)
			return cmds[i].code;
	}
	if (matches(argv[0], "help") == 0)
		usage();
	return 0;
}
"""


def test_a_loop_over_the_files_own_table_takes_its_names_in_place(tmp_path: Path) -> None:
    """ip/tcp_metrics.c tests its verbs by looping over its own cmds[], not one by one."""
    git_dir = repo(tmp_path, {"ip/ip.c": IP_C, "ip/iplink.c": IPLINK_C, "ip/ipl2tp.c": IPL2TP_C})
    _, verbs = load_script().ip_tables(git_dir, "ip")
    assert verbs["l2tp"] == (("add", True), ("list", True), ("flush", True), ("help", True))


IPMPTCP_C = """
int do_mptcp(int argc, char **argv)
{
	if (matches(*argv, "help") == 0)
		usage();
	if (matches(*argv, "endpoint") == 0) {
		NEXT_ARG_FWD();
		if (argc == 0)
			return addr_show(0, NULL);
		if (matches(*argv, "add") == 0)
			return addr_modify(argc-1, argv+1, CMD_ADD);
		if (matches(*argv, "show") == 0)
			return addr_show(argc-1, argv+1);
		goto unknown;
	}
	if (matches(*argv, "limits") == 0) {
		NEXT_ARG();
		if (matches(*argv, "set") == 0) {
			NEXT_ARG();
			if (strcmp(*argv, "sha1") == 0)
				alg = 1;
		} else if (strcmp(*argv, "show") == 0) {
			cmd = GET;
		}
	}
	while (argc > 0) {
		if (matches(*argv, "dev") == 0) {
			NEXT_ARG();
			if (matches(*argv, "any") == 0)
				any = 1;
		}
	}
	if (matches(*argv, "monitor") == 0) {
		NEXT_ARG_FWD();
		return monitor();
	}
unknown:
	return -1;
}
"""
IP_MPTCP_C = IP_C.replace('{ "l2tp",	do_ipl2tp },', '{ "mptcp",	do_mptcp },')


def test_a_verb_whose_block_tests_the_next_word_gets_those_words_and_its_default(
    tmp_path: Path,
) -> None:
    """ip/ipmptcp.c: `endpoint` and `limits` test the next word in their own blocks; only the
    block's own level counts (not `sha1` inside `set`, not a loop's `dev`), and the default is
    the word whose branch calls what `argc == 0` calls, words aside."""
    files = {"ip/ip.c": IP_MPTCP_C, "ip/iplink.c": IPLINK_C, "ip/ipmptcp.c": IPMPTCP_C}
    subverbs = load_script().ip_subverbs(repo(tmp_path, files), "ip")
    assert subverbs == {
        "mptcp": {
            "endpoint": ((("add", True), ("show", True)), "show"),
            "limits": ((("set", True), ("show", False)), ""),
        }
    }
