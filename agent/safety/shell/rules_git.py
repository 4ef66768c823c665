"""Rules for git: its read verbs with their whole option grammars, everything else changes a repo.

Global options come first and are read with git's grammar: `-c` and `--config-env` set config
that can run commands (pager, fsmonitor, ssh), `--exec-path=DIR` picks where subcommands come
from. A read verb stays read-only only when each option it gets is one git documents for it and
none writes (`--output`), runs a program (`--ext-diff`, `-O`, `--upload-pack`) or edits refs
(`reflog expire`, `stash -u`).
"""

from __future__ import annotations

import re

from agent.safety.shell.endpoints import endpoint_problem
from agent.safety.shell.options import Grammar, grammar, read_args, word_set
from agent.safety.shell.outcomes import (
    Outcome,
    ProgramRule,
    destructive,
    judge_options,
    mutating,
    option_effects,
    read_only,
    understood,
)
from agent.safety.shell.shell_words import RuntimeText

GLOBAL = grammar(
    "-C= -c= --config-env=:x --exec-path[=] --html-path --man-path --info-path "
    "-p|--paginate -P|--no-pager --git-dir= --work-tree= --namespace= --bare "
    "--no-replace-objects --no-lazy-fetch --no-optional-locks --no-advice --literal-pathspecs "
    "--glob-pathspecs --noglob-pathspecs --icase-pathspecs --list-cmds= --attr-source= "
    "-v|--version -h|--help",
    stop_at_positional=True,
)
DIFF = (
    "-p|-u|--patch -s|--no-patch -U|--unified= --output=:w --output-indicator-new= "
    "--output-indicator-old= --output-indicator-context= --raw --patch-with-raw -t "
    "--indent-heuristic --no-indent-heuristic --minimal --patience --histogram --anchored= "
    "--diff-algorithm= --stat[=] --compact-summary --numstat --shortstat -X|--dirstat[=] "
    "--cumulative --dirstat-by-file[=] --summary --patch-with-stat -z --name-only "
    "--name-status --submodule[=] --color[=] --no-color --color-moved[=] --no-color-moved "
    "--color-moved-ws= --no-color-moved-ws --word-diff[=] --word-diff-regex= --color-words[=] "
    "--no-renames --rename-empty --no-rename-empty --check --ws-error-highlight= --full-index "
    "--binary --abbrev[=] --no-abbrev -B|--break-rewrites[=] -M|--find-renames[=] "
    "-C|--find-copies[=] --find-copies-harder -D|--irreversible-delete -l= --diff-filter= -S= "
    "-G= --find-object= --pickaxe-all --pickaxe-regex -O= --skip-to= --rotate-to= -R "
    "--relative[=] --no-relative -a|--text --ignore-cr-at-eol --ignore-space-at-eol "
    "-b|--ignore-space-change -w|--ignore-all-space --ignore-blank-lines "
    "-I|--ignore-matching-lines= --inter-hunk-context= -W|--function-context --exit-code "
    "--quiet --ext-diff:x --no-ext-diff --textconv --no-textconv --ignore-submodules[=] "
    "--src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= "
    "--ita-invisible-in-index --ita-visible-in-index --cached --staged --merge-base "
    "--no-index -1 -2 -3 --base --ours --theirs -0 --stat-width= --stat-name-width= "
    "--stat-count= --stat-graph-width= --full-diff --diff-merges= --no-diff-merges "
    "--combined-all-paths -m -c --cc --remerge-diff -r --dd -h --help "
)
LOG = DIFF + (
    "--follow --no-decorate --decorate[=] --decorate-refs= --decorate-refs-exclude= "
    "--clear-decorations --source --mailmap --no-mailmap --use-mailmap --no-use-mailmap "
    "--log-size -L= -n|--max-count= --skip= --since= --after= --since-as-filter= --until= "
    "--before= --author= --committer= --grep-reflog= --grep= --all-match --invert-grep "
    "-i|--regexp-ignore-case --basic-regexp -E|--extended-regexp -F|--fixed-strings "
    "-P|--perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents= "
    "--no-min-parents --no-max-parents --first-parent --exclude-first-parent-only --not --all "
    "--branches[=] --tags[=] --remotes[=] --glob= --exclude= --exclude-hidden= --reflog "
    "--alternate-refs --single-worktree --ignore-missing --bisect --stdin --cherry-mark "
    "--cherry-pick --left-only --right-only --cherry -g|--walk-reflogs --merge --boundary "
    "--simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges "
    "--ancestry-path[=] --date-order --author-date-order --topo-order --reverse --no-walk[=] "
    "--do-walk --pretty[=] --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= "
    "--expand-tabs[=] --no-expand-tabs --notes[=] --no-notes --show-notes-by-default "
    "--show-notes[=] --standard-notes --no-standard-notes --show-signature --relative-date "
    "--date= --parents --children --left-right --graph --show-linear-break[=] --count "
    "--objects --objects-edge --unpacked --timestamp --header --no-commit-id --root "
    "--max-age= --min-age= --in-commit-order --indexed-objects --missing= --disk-usage[=] "
)
VERBS: dict[str, Grammar] = {
    "log": grammar(LOG, numeric=True),
    "show": grammar(LOG, numeric=True),
    "whatchanged": grammar(LOG, numeric=True),
    "rev-list": grammar(LOG, numeric=True),
    "diff": grammar(DIFF),
    "diff-tree": grammar(LOG + "--stdin", numeric=True),
    "diff-index": grammar(DIFF),
    "diff-files": grammar(DIFF),
    "status": grammar(
        "-s|--short -b|--branch --show-stash --porcelain[=] --long -v|--verbose "
        "-u|--untracked-files[=] --ignore-submodules[=] --ignored[=] -z --column[=] --no-column "
        "--ahead-behind --no-ahead-behind --renames --no-renames --find-renames[=] -h --help"
    ),
    "rev-parse": grammar(
        "--parseopt --sq-quote --keep-dashdash --stop-at-non-option --stuck-long --revs-only "
        "--no-revs --flags --no-flags --default= --prefix= --verify -q|--quiet --sq --short[=] "
        "--not --abbrev-ref[=] --symbolic --symbolic-full-name --all --branches[=] --tags[=] "
        "--remotes[=] --glob= --exclude= --exclude-hidden= --disambiguate= --local-env-vars "
        "--path-format= --git-dir --git-common-dir --resolve-git-dir= --git-path= "
        "--show-toplevel --show-superproject-working-tree --shared-index-path "
        "--absolute-git-dir --is-inside-git-dir --is-inside-work-tree --is-bare-repository "
        "--is-shallow-repository --show-cdup --show-prefix --show-object-format[=] "
        "--show-ref-format --since= --after= --until= --before= -h --help"
    ),
    "ls-files": grammar(
        "-c|--cached -d|--deleted -m|--modified -o|--others -i|--ignored -s|--stage "
        "-u|--unmerged -k|--killed -z -t -v -f --directory --no-empty-directory --eol "
        "--deduplicate -x|--exclude= -X|--exclude-from= --exclude-per-directory= "
        "--exclude-standard --error-unmatch --with-tree= --full-name --recurse-submodules "
        "--abbrev[=] --debug --sparse --format= -h --help"
    ),
    "ls-tree": grammar(
        "-d -r -t -l|--long -z --name-only --name-status --object-only --full-name --full-tree "
        "--abbrev[=] --format= -h --help"
    ),
    "blame": grammar(
        "-b --root --show-stats -L= -l -t -S= --reverse= --first-parent -p|--porcelain "
        "--line-porcelain --incremental --encoding= --contents= --date= --progress "
        "--no-progress -M[=] -C[=] --ignore-rev= --ignore-revs-file= --color-lines "
        "--color-by-age --minimal -c -f|--show-name -n|--show-number -s -e|--show-email -w "
        "--abbrev[=] --score-debug -h --help"
    ),
    "describe": grammar(
        "--dirty[=] --broken[=] --all --tags --contains --abbrev= --candidates= --exact-match "
        "--debug --long --match= --exclude= --always --first-parent -h --help"
    ),
    "shortlog": grammar(
        LOG + "-n|--numbered -s|--summary -e|--email --group= -c|--committer -w[=]",
        numeric=True,
    ),
    "grep": grammar(
        "--cached --no-index --untracked --no-exclude-standard --exclude-standard "
        "--recurse-submodules -a|--text --textconv --no-textconv -i|--ignore-case -I "
        "--max-depth= -r|--recursive --no-recursive -w|--word-regexp -v|--invert-match -h -H "
        "--full-name -E|--extended-regexp -G|--basic-regexp -P|--perl-regexp "
        "-F|--fixed-strings -n|--line-number --column -l|--files-with-matches|--name-only "
        "-L|--files-without-match -O|--open-files-in-pager[=]:x -z|--null -o|--only-matching "
        "-c|--count --color[=] --no-color --break --heading -p|--show-function "
        "-A|--after-context= -B|--before-context= -C|--context= -W|--function-context "
        "-m|--max-count= --threads= -f= -e= --and --or --not --all-match -q|--quiet --help",
        numeric=True,
    ),
    "cat-file": grammar(
        "-t -s -e -p --textconv:x --filters:x --path= --batch[=] --batch-check[=] "
        "--batch-command[=] --batch-all-objects --buffer --unordered --follow-symlinks -Z "
        "--allow-unknown-type --use-mailmap --no-use-mailmap -h --help"
    ),
    "show-ref": grammar(
        "--head --branches --heads --tags -d|--dereference -s|--hash[=] --verify --abbrev[=] "
        "-q|--quiet --exclude-existing[=] --exists -h --help"
    ),
    "for-each-ref": grammar(
        "--count= --shell --perl --python --tcl --sort= --format= --color[=] --points-at= "
        "--merged[=] --no-merged[=] --contains[=] --no-contains[=] --ignore-case --omit-empty "
        "--exclude= --include-root-refs -h --help"
    ),
    "count-objects": grammar("-v|--verbose -H|--human-readable -h --help"),
    "merge-base": grammar("-a|--all --octopus --independent --is-ancestor --fork-point -h"),
    "name-rev": grammar(
        "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined --always -h"
    ),
    "check-ignore": grammar("-q|--quiet -v|--verbose --stdin -z -n|--non-matching --no-index -h"),
    "check-attr": grammar("-a|--all --cached --stdin -z --source= -h"),
    "var": grammar("-l -h"),
    "version": grammar("--build-options -h"),
    "help": grammar(
        "-a|--all -g|--guides -c|--config -i|--info:x -m|--man -w|--web:x "
        "--no-external-commands --no-aliases --verbose --user-interfaces --developer-interfaces"
    ),
    "ls-remote": grammar(
        "--heads --tags --branches --refs --upload-pack=:x --exec=:x --exit-code --get-url "
        "--sort= -o|--server-option= --symref -q|--quiet -h"
    ),
    "archive": grammar(
        "--format= -l|--list -v|--verbose --prefix= --add-file= --add-virtual-file= "
        "-o|--output=:w --worktree-attributes --remote= --exec=:x --mtime= -h",
        numeric=True,
    ),
}
BRANCH_LIST = grammar(
    "-a|--all -r|--remotes -v|--verbose -l|--list --contains[=] --no-contains[=] --merged[=] "
    "--no-merged[=] --points-at= --sort= --format= --color[=] --no-color --column[=] "
    "--no-column --abbrev[=] --no-abbrev -i|--ignore-case --omit-empty --show-current "
    "-q|--quiet -h"
)
TAG_LIST = grammar(
    "-l|--list -n[=] --sort= --format= --color[=] --column[=] --no-column --contains[=] "
    "--no-contains[=] --merged[=] --no-merged[=] --points-at= -i|--ignore-case --omit-empty -h"
)
CONFIG_READ = grammar(
    "--get --get-all --get-regexp --get-urlmatch --get-color --get-colorbool -l|--list "
    "--show-origin --show-scope --name-only --null -z --type= --bool --int --bool-or-int "
    "--path --expiry-date --default= --global --system --local --worktree -f|--file= "
    "--blob= --includes --no-includes --fixed-value --all --regexp --url= -h"
)
CONFIG_GETTERS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                  "--get-colorbool", "-l")  # fmt: skip
REMOTE_READ = frozenset({"show", "get-url"})
SCP_LIKE = re.compile(r"^(?:[^@/:]+@)?[^/:]+:")
CONFIG_INERT = word_set(
    "core.quotepath core.abbrev column.ui log.date log.decorate log.abbrevcommit log.follow "
    "log.mailmap diff.noprefix diff.mnemonicprefix diff.renames diff.relative diff.context "
    "diff.interhunkcontext diff.statgraphwidth status.short status.branch status.relativepaths "
    "grep.linenumber grep.extendedregexp grep.patterntype format.pretty i18n.logoutputencoding "
    "blame.date blame.coloring branch.sort tag.sort core.safecrlf init.defaultbranch"
)


def _git(name: str, args: list[str]) -> list[Outcome]:
    parsed, problems = understood(name, args, GLOBAL)
    if problems:
        return problems
    effects = option_effects(name, parsed, {
        "--config-env": "sets config that can run commands (pager, fsmonitor, ssh)"})  # fmt: skip
    effects += [o for setting in parsed.values("-c") for o in _config_setting(setting)]
    if parsed.value("--exec-path"):
        effects += mutating("'git --exec-path=DIR' runs subcommands from another folder")
    rest = parsed.rest
    if not rest:
        if parsed.has("-v", "-h", "--html-path", "--man-path", "--info-path", "--exec-path"):
            return effects or read_only("'git --version' only prints")
        return mutating("'git' without a command")
    verb, tail = rest[0], rest[1:]
    if isinstance(verb, RuntimeText):
        return mutating(f"'git {verb}': the command is only known at run time")
    destructive_found = _destructive(verb, tail)
    if destructive_found:
        return destructive_found
    if verb == "ls-remote":
        effects += _remote_endpoint(tail)
    if verb in VERBS:
        return effects + _read_verb(f"git {verb}", tail, VERBS[verb])
    special = {"branch": _branch, "tag": _tag, "remote": _remote, "stash": _stash,
               "reflog": _reflog, "config": _config}.get(verb)  # fmt: skip
    if special is not None:
        return effects + special(tail)
    return mutating(f"'git {verb}' changes the repository")


def _config_setting(setting: str) -> list[Outcome]:
    """`git -c KEY=VALUE`: read-only only for keys known to change how output looks."""
    key, _, value = setting.partition("=")
    key = key.lower()
    if isinstance(setting, RuntimeText):
        return mutating(f"'git -c {setting}' sets config only known at run time")
    if key in CONFIG_INERT or key.startswith(("color.", "advice.")):
        return []
    if (key == "core.pager" or key.startswith("pager.")) and value in ("", "cat", "false"):
        return []
    return mutating(f"'git -c {key}' is not a setting known to be harmless (it may run commands)")


def _remote_endpoint(tail: list[str]) -> list[Outcome]:
    """`git ls-remote URL`: the credential helper's secret for that host goes there."""
    repository = next((w for w in tail if not w.startswith("-")), "")
    is_url = "://" in repository or SCP_LIKE.match(repository) is not None
    if is_url and (problem := endpoint_problem(repository, "'git ls-remote' asks")):
        return mutating(problem)
    return []


def _read_verb(label: str, args: list[str], spec: Grammar) -> list[Outcome]:
    _, found = judge_options(label, args, spec, why={
        "--output": "writes a file", "--ext-diff": "runs an external diff program",
        "-O": "opens the matches in a pager program", "--upload-pack": "runs a program",
        "--exec": "runs a program", "--textconv": "runs conversion filters",
        "--filters": "runs conversion filters"})  # fmt: skip
    return found or read_only(f"'{label}' only reads")


def _destructive(verb: str, tail: list[str]) -> list[Outcome]:
    if verb == "reset" and "--hard" in tail:
        return destructive("'git reset --hard' discards local changes")
    if verb == "clean" and any(a.startswith("-") and "f" in a.lstrip("-") for a in tail):
        return destructive("'git clean -f' deletes untracked files")
    if verb == "push" and any(
        a in ("-f", "--force", "--delete", "-d", "--mirror") or a.startswith("+") for a in tail
    ):
        return destructive("'git push --force/--delete' rewrites a remote")
    if verb == "checkout" and ("--" in tail or "." in tail or "-f" in tail):
        return destructive("'git checkout -- PATH' discards local changes")
    if verb == "restore" or (verb == "stash" and tail[:1] in (["drop"], ["clear"])):
        return destructive(f"'git {verb}' discards changes")
    return []


def _branch(tail: list[str]) -> list[Outcome]:
    parsed, found = judge_options("git branch", tail, BRANCH_LIST)
    if found or (parsed.positionals and not parsed.has("-l")):
        return found or mutating("'git branch NAME' creates a branch")
    return read_only("'git branch' only lists branches")


def _tag(tail: list[str]) -> list[Outcome]:
    parsed, found = judge_options("git tag", tail, TAG_LIST)
    if found or (parsed.positionals and not parsed.has("-l")):
        return found or mutating("'git tag NAME' creates a tag")
    return read_only("'git tag' only lists tags")


def _remote(tail: list[str]) -> list[Outcome]:
    flags = [a for a in tail if a.startswith("-")]
    words = [a for a in tail if not a.startswith("-")]
    if any(f not in ("-v", "--verbose", "-n", "--push", "--all") for f in flags):
        return mutating(f"'git remote {flags[0]}' is not known to be harmless")
    if not words or (words[0] in REMOTE_READ and len(words) >= 2):
        return read_only("'git remote' only lists remotes")
    return mutating(f"'git remote {words[0]}' changes remotes")


def _stash(tail: list[str]) -> list[Outcome]:
    if tail[:1] == ["list"]:
        return _read_verb("git stash list", tail[1:], VERBS["log"])
    if tail[:1] == ["show"]:
        return _read_verb("git stash show", tail[1:], VERBS["diff"])
    return mutating("'git stash' saves and resets local changes")


def _reflog(tail: list[str]) -> list[Outcome]:
    if tail[:1] in (["expire"], ["delete"], ["drop"]):
        return destructive(f"'git reflog {tail[0]}' deletes reflog entries")
    if tail[:1] == ["exists"]:
        return read_only("'git reflog exists' only checks")
    rest = tail[1:] if tail[:1] == ["show"] else tail
    return _read_verb("git reflog", rest, VERBS["log"])


def _config(tail: list[str]) -> list[Outcome]:
    if tail[:1] in (["get"], ["list"]):
        tail = ["--get" if tail[0] == "get" else "--list", *tail[1:]]
    parsed = read_args(tail, CONFIG_READ)
    if parsed.problem or not parsed.has(*CONFIG_GETTERS):
        return mutating("'git config' changes configuration")
    return read_only("'git config --get/--list' only reads")


def git_rules() -> dict[str, ProgramRule]:
    return {"git": _git}
