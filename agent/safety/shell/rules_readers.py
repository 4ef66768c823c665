"""Rules for programs that read files and filter text: each with its own whole option grammar.

Most of these only read whatever options they get, yet a few options write (`sort -o`, `tree -o`,
`file -C`, `less -o`) or run programs (`sort --compress-program`, `less`'s lesskey files); those
are marked in the spec, so using one is judged for what it does.
"""

from __future__ import annotations

import itertools

from agent.safety.shell.options import grammar, word_set
from agent.safety.shell.outcomes import (
    ONLY_READS,
    Outcome,
    ProgramRule,
    judge_options,
    mutating,
    read_only,
    reader,
    written_file,
)
from agent.safety.shell.rules_shell import sets_variables
from agent.safety.shell.shell_words import RuntimeText

HV = "--help --version"
CAT = grammar(
    f"-A|--show-all -b|--number-nonblank -e -E|--show-ends -n|--number -s|--squeeze-blank -t "
    f"-T|--show-tabs -u -v|--show-nonprinting {HV}"
)
TAC = grammar(f"-b|--before -r|--regex -s|--separator= {HV}")
HEAD = grammar(
    f"-c|--bytes= -n|--lines= -q|--quiet|--silent -v|--verbose -z|--zero-terminated {HV}",
    numeric=True,
)
TAIL = grammar(
    "-c|--bytes= -f|--follow[=] -F -n|--lines= --max-unchanged-stats= --pid= -q|--quiet|--silent "
    f"--retry -s|--sleep-interval= -v|--verbose -z|--zero-terminated --debug {HV}",
    numeric=True,
)
LESS = grammar(
    "-a|--search-skip-screen -A|--SEARCH-SKIP-SCREEN -B|--auto-buffers -c|--clear-screen "
    "-C|--CLEAR-SCREEN -d|--dumb -e|--quit-at-eof -E|--QUIT-AT-EOF -f|--force "
    "-F|--quit-if-one-screen -g|--hilite-search -G|--HILITE-SEARCH -i|--ignore-case "
    "-I|--IGNORE-CASE -J|--status-column -K|--quit-on-intr -L|--no-lessopen -m|--long-prompt "
    "-M|--LONG-PROMPT -n|--line-numbers -N|--LINE-NUMBERS -q|--quiet|--silent -Q|--QUIET "
    "-r|--raw-control-chars -R|--RAW-CONTROL-CHARS -s|--squeeze-blank-lines -S|--chop-long-lines "
    "-u|--underline-special -U|--UNDERLINE-SPECIAL -w|--hilite-unread -W|--HILITE-UNREAD "
    "-X|--no-init -~|--tilde -b|--buffers= -h|--max-back-scroll= -j|--jump-target= "
    "-p|--pattern= -P|--prompt= -t|--tag= -T|--tag-file= -x|--tabs= -y|--max-forw-scroll= "
    "-z|--window= -#|--shift= --mouse --wheel-lines= --use-color --no-histdups --no-vbell "
    "--incsearch --line-num-width= --status-col-width= --header= --file-size --follow-name "
    "-o|--log-file=:w -O|--LOG-FILE=:w -k|--lesskey-file=:x --lesskey-src=:x --lesskey-content=:x "
    f"-D|--color= -V {HV}"
)
MORE = grammar(
    "-d|--silent -l|--logical -f|--no-pause -p|--print-over -c|--clean-print -s|--squeeze "
    f"-u|--plain -n|--lines= -e|--exit-on-eof {HV}",
    numeric=True,
)
LS = grammar(
    "-a|--all -A|--almost-all --author -b|--escape --block-size= -B|--ignore-backups -c -C "
    "--color[=] -d|--directory -D|--dired -f -F|--classify[=] --file-type --format= --full-time "
    "-g --group-directories-first -G|--no-group -h|--human-readable --si -H "
    "--dereference-command-line --dereference-command-line-symlink-to-dir --hide= "
    "--hyperlink[=] --indicator-style= -i|--inode -I|--ignore= -k|--kibibytes -l -L|--dereference "
    "-m -n|--numeric-uid-gid -N|--literal -o -p -q|--hide-control-chars --show-control-chars "
    "-Q|--quote-name --quoting-style= -r|--reverse -R|--recursive -s|--size -S --sort= --time= "
    "--time-style= -t -T|--tabsize= -u -U -v -w|--width= -x -X -Z|--context --zero -1 " + HV
)
STAT = grammar(
    f"-L|--dereference -f|--file-system -c|--format= --printf= -t|--terse --cached= {HV}"
)
FILE = grammar(
    "-b|--brief -c|--checking-printout -C|--compile:w -d --debug -e|--exclude= --exclude-quiet= "
    "-E --extension -f|--files-from= -F|--separator= -h|--no-dereference -i|--mime --mime-type "
    "--mime-encoding -k|--keep-going -l|--list -L|--dereference -m|--magic-file= -n|--no-buffer "
    "-N|--no-pad -p|--preserve-date -P|--parameter= -r|--raw -s|--special-files -S|--no-sandbox "
    "-v|--version -z|--uncompress -Z|--uncompress-noreport -0|--print0 --apple --help"
)
WC = grammar(
    f"-c|--bytes -m|--chars -l|--lines -L|--max-line-length -w|--words --files0-from= --total= {HV}"
)
CUT = grammar(
    "-b|--bytes= -c|--characters= -d|--delimiter= -f|--fields= -n --complement "
    f"-s|--only-delimited --output-delimiter= -z|--zero-terminated {HV}"
)
TR = grammar(f"-c|-C|--complement -d|--delete -s|--squeeze-repeats -t|--truncate-set1 {HV}")
SORT = grammar(
    "-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case "
    "-g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort -h|--human-numeric-sort "
    "-n|--numeric-sort -R|--random-sort --random-source= -r|--reverse --sort= -V|--version-sort "
    "--batch-size= -c --check[=] -C --compress-program=:x --debug --files0-from= -k|--key= "
    "-m|--merge -o|--output=:w -s|--stable -S|--buffer-size= -t|--field-separator= "
    f"-T|--temporary-directory=:w --parallel= -u|--unique -z|--zero-terminated {HV}"
)
UNIQ = grammar(
    "-c|--count -d|--repeated -D --all-repeated[=] -f|--skip-fields= --group[=] -i|--ignore-case "
    f"-s|--skip-chars= -u|--unique -z|--zero-terminated -w|--check-chars= {HV}",
    numeric=True,
)
COMM = grammar(
    "-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z|--zero-terminated " + HV
)
DIFF = grammar(
    "--normal -q|--brief --report-identical-files -s -c -C|--context[=] -u -U|--unified[=] "
    "-e|--ed -n|--rcs -y|--side-by-side -W|--width= --left-column --suppress-common-lines "
    "-p|--show-c-function -F|--show-function-line= --label= -t|--expand-tabs -T|--initial-tab "
    "--tabsize= --suppress-blank-empty -l|--paginate -r|--recursive --no-dereference "
    "-N|--new-file --unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case "
    "-x|--exclude= -X|--exclude-from= -S|--starting-file= --from-file= --to-file= "
    "-i|--ignore-case -E|--ignore-tab-expansion -Z|--ignore-trailing-space "
    "-b|--ignore-space-change -w|--ignore-all-space -B|--ignore-blank-lines "
    "-I|--ignore-matching-lines= -a|--text --strip-trailing-cr -D|--ifdef= --line-format= "
    "--old-group-format= --new-group-format= --unchanged-group-format= --changed-group-format= "
    "--old-line-format= --new-line-format= --unchanged-line-format= -d|--minimal "
    "--horizon-lines= --speed-large-files --color[=] --palette= --help -v|--version"
)
CMP = grammar(
    "-b|--print-bytes -i|--ignore-initial= -l|--verbose -n|--bytes= -s|--quiet|--silent --help "
    "-v|--version"
)
COLUMN = grammar(
    "-t|--table -s|--separator= -o|--output-separator= -c|--output-width= -x|--fillrows -n "
    "-N|--table-columns= -R|--table-right= -T|--table-truncate= -E|--table-noextreme= "
    "-W|--table-wrap= -H|--table-hide= -O|--table-order= -J|--json -r|--tree= -i|--tree-id= "
    "-p|--tree-parent= -e|--table-noheadings -d|--table-header-repeat -l|--table-columns-limit= "
    "-L|--keep-empty-lines -h|--help -V|--version"
)
NL = grammar(
    "-b|--body-numbering= -d|--section-delimiter= -f|--footer-numbering= "
    "-h|--header-numbering= -i|--line-increment= -l|--join-blank-lines= -n|--number-format= "
    "-p|--no-renumber -s|--number-separator= -v|--starting-line-number= -w|--number-width= " + HV
)
REV = grammar("-0|--zero -h|--help -V|--version")
FOLD = grammar(f"-b|--bytes -s|--spaces -w|--width= {HV}", numeric=True)
EXPAND = grammar(f"-i|--initial -t|--tabs= -a|--all --first-only {HV}", numeric=True)
OD = grammar(
    "-A|--address-radix= --endian= -j|--skip-bytes= -N|--read-bytes= -S|--strings[=] "
    "-t|--format= -v|--output-duplicates -w|--width[=] --traditional -a -b -c -d -f -i -l -o -s "
    f"-x {HV}"
)
HEXDUMP = grammar(
    "-b|--one-byte-octal -X|--one-byte-hex -c|--one-byte-char -C|--canonical "
    "-d|--two-bytes-decimal -o|--two-bytes-octal -x|--two-bytes-hex -e|--format= "
    "-f|--format-file= -L|--color[=] -n|--length= -s|--skip= -v|--no-squeezing -h|--help "
    "-V|--version"
)
STRINGS = grammar(
    "-a|--all -d|--data -f|--print-file-name -n|--bytes= -t|--radix= -o -e|--encoding= "
    "-T|--target= -w|--include-all-whitespace -s|--output-separator= -U|--unicode= -h|--help "
    "-v|-V|--version",
    numeric=True,
)
BASE64 = grammar(f"-d|--decode -i|--ignore-garbage -w|--wrap= {HV}")
NUMFMT = grammar(
    "--debug -d|--delimiter= --field= --format= --from= --from-unit= --grouping --header[=] "
    f"--invalid= --padding= --round= --suffix= --to= --to-unit= -z|--zero-terminated {HV}"
)
CHECKSUM = grammar(
    "-b|--binary -c|--check --tag -t|--text -z|--zero --ignore-missing --quiet --status --strict "
    f"-w|--warn -l|--length= -a|--algorithm= --base64 --raw --untagged --debug {HV}"
)
READLINK = grammar(
    "-f|--canonicalize -e|--canonicalize-existing -m|--canonicalize-missing -n|--no-newline "
    f"-q|--quiet -s|--silent -v|--verbose -z|--zero {HV}"
)
REALPATH = grammar(
    "-e|--canonicalize-existing -m|--canonicalize-missing -L|--logical -P|--physical -q|--quiet "
    f"--relative-to= --relative-base= -s|--strip|--no-symlinks -z|--zero {HV}"
)
BASENAME = grammar(f"-a|--multiple -s|--suffix= -z|--zero {HV}")
DIRNAME = grammar(f"-z|--zero {HV}")
GREP = grammar(
    "-E|--extended-regexp -F|--fixed-strings -G|--basic-regexp -P|--perl-regexp -e|--regexp= "
    "-f|--file= -i|-y|--ignore-case --no-ignore-case -v|--invert-match -w|--word-regexp "
    "-x|--line-regexp -c|--count --color[=] --colour[=] -L|--files-without-match "
    "-l|--files-with-matches -m|--max-count= -o|--only-matching -q|--quiet|--silent "
    "-s|--no-messages -b|--byte-offset -H|--with-filename -h|--no-filename --label= "
    "-n|--line-number --line-buffered -T|--initial-tab -Z|--null -A|--after-context= "
    "-B|--before-context= -C|--context= -a|--text --binary-files= -D|--devices= "
    "-d|--directories= --exclude= --exclude-from= --exclude-dir= -I --include= -r|--recursive "
    "-R|--dereference-recursive -U|--binary -u|--unix-byte-offsets -z|--null-data -V|--version "
    "--help",
    numeric=True,
)
ZCAT = grammar(
    "-f|--force -h|--help -l|--list -L|--license -q|--quiet -V|--version -v|--verbose "
    "-t|--test -k|--keep -c|--stdout -d|--decompress -r|--recursive"
)
DU = grammar(
    "-0|--null -a|--all --apparent-size -B|--block-size= -b|--bytes -c|--total "
    "-D|--dereference-args -d|--max-depth= --files0-from= -H -h|--human-readable --inodes -k "
    "-L|--dereference -l|--count-links -m -P|--no-dereference -S|--separate-dirs --si "
    "-s|--summarize -t|--threshold= --time[=] --time-style= -X|--exclude-from= --exclude= "
    f"-x|--one-file-system {HV}"
)
DF = grammar(
    "-a|--all -B|--block-size= -h|--human-readable -H|--si -i|--inodes -k -l|--local --no-sync "
    "--output[=] -P|--portability --sync -t|--type= -T|--print-type -x|--exclude-type= -v "
    f"--total {HV}"
)
PASTE = grammar(f"-d|--delimiters= -s|--serial -z|--zero-terminated {HV}")
JOIN = grammar(
    "-a= -e= -i|--ignore-case -j= -o= -t= -v= -1= -2= --check-order --nocheck-order --header "
    f"-z|--zero-terminated {HV}"
)
SEQ = grammar(f"-f|--format= -s|--separator= -w|--equal-width {HV}", numeric=True)
TREE = grammar(
    "-a -d -l -f -x -L= -R:m -P= -I= --gitignore --ignore-case --matchdirs --metafirst --prune "
    "--info --infofile= --noreport --charset= --filelimit= --timefmt= -o=:w -q -N -Q -p -u -g -s "
    "-h --si --du -D -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst --sort= -i -A "
    "-S -n -C -X -J -H= -T= --nolinks --hintro= --houtro= --fromfile --fflinks --version --help"
)
YQ = grammar(
    "-i|--inplace:w -s|--split-exp=:w -o|--output-format= -p|--input-format= "
    "-r|--unwrapScalar[=] -e|--exit-status -n|--null-input -P|--prettyPrint -I|--indent= "
    "-C|--colors -M|--no-colors -j|--tojson -y|--toyaml -0|--nul-output -N|--no-doc "
    "--header-preprocess[=] --from-file= --expression= -f|--front-matter= -v|--verbose -V "
    "--version -h|--help --xml-attribute-prefix= --xml-content-name= --csv-separator= "
    "--properties-separator= --string-interpolation[=] --unwrapScalar"
)
XXD_FLAGS = word_set(
    "-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -h -help -i -include -p -ps -postscript "
    "-plain -r -revert -d -u -v -version"
)
XXD_VALUES = ("-cols", "-groupsize", "-len", "-name", "-offset", "-seek", "-c", "-g", "-l", "-n",
              "-o", "-s", "-R")  # fmt: skip
JQ_FLAGS = word_set(
    "-r --raw-output -j --join-output -a --ascii-output -c --compact-output -n --null-input "
    "-e --exit-status -s --slurp -S --sort-keys -C --color-output -M --monochrome-output "
    "-R --raw-input --tab --seq --stream --stream-errors --raw-output0 --unbuffered -h --help "
    "-V --version --build-configuration --args --jsonargs"
)
JQ_VALUES = {"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "-f": 1,
             "--from-file": 1, "-L": 1, "--indent": 1}  # fmt: skip
# Commands that print their arguments and have no option that writes or runs anything.
PRINTERS = ("echo", "true", "false", ":", "expr", "sleep", "ps")


def _uniq(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, UNIQ)
    if found:
        return found
    if len(parsed.positionals) >= 2:
        return written_file("uniq OUTPUT", parsed.positionals[1]) or read_only("'uniq' only reads")
    return read_only(f"'uniq' {ONLY_READS}")


def _less(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, LESS)
    if found:
        return found
    if any(p.startswith("+") for p in parsed.positionals):
        return mutating(f"'{name} +COMMAND' runs a {name} command at start")
    return read_only(f"'{name}' only shows files")


def _strings(name: str, args: list[str]) -> list[Outcome]:
    parsed, found = judge_options(name, args, STRINGS)
    if found:
        return found
    if any(p.startswith("@") for p in parsed.positionals):
        return mutating("'strings @FILE' reads more options from a file")
    return read_only(f"'strings' {ONLY_READS}")


def _xxd(name: str, args: list[str]) -> list[Outcome]:
    positionals: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg.startswith("-") and len(arg) > 1 and not positionals:
            if arg not in XXD_FLAGS:
                value = next((v for v in XXD_VALUES if arg.startswith(v)), None)
                if value is None:
                    return mutating(f"'xxd': option {arg} is not known to be harmless")
                index += 1 if arg == value else 0
        else:
            positionals.append(arg)
        index += 1
    if "-r" in args or "-revert" in args:
        target = positionals[1] if len(positionals) > 1 else None
        if target is not None:
            return written_file("xxd -r", target) or read_only("'xxd -r' prints bytes")
    if len(positionals) >= 2:
        return written_file("xxd OUTPUT", positionals[1]) or read_only("'xxd' prints a dump")
    return read_only(f"'xxd' {ONLY_READS}")


def _jq(name: str, args: list[str]) -> list[Outcome]:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("--args", "--jsonargs"):
            break
        if arg.startswith("-") and len(arg) > 1:
            if arg in JQ_VALUES:
                index += JQ_VALUES[arg]
            elif arg not in JQ_FLAGS and not (
                arg[1:].isalpha() and all(f"-{c}" in JQ_FLAGS for c in arg[1:])
            ):
                return mutating(f"'jq': option {arg} is not known to be harmless")
        index += 1
    return read_only("'jq' only reads and prints JSON")


def _printer(name: str, args: list[str]) -> list[Outcome]:
    return read_only(f"'{name}' {ONLY_READS}")


def _printf(name: str, args: list[str]) -> list[Outcome]:
    """`printf -v NAME` assigns instead of printing: judged like any assignment."""
    if not args or not args[0].startswith("-v"):
        return read_only("'printf' only prints")
    target = args[0][2:] or (args[1] if len(args) > 1 else "")
    if not target:
        return mutating("'printf -v' without a variable name")
    return sets_variables([target], "printf -v")


def _test(name: str, args: list[str]) -> list[Outcome]:
    """bash evaluates the subscript of `-v NAME[…]`, which can run commands."""
    for flag, operand in itertools.pairwise(args):
        if flag == "-v" and ("[" in operand or isinstance(operand, RuntimeText)):
            return mutating(f"'{name} -v {operand}' evaluates an array subscript")
    return read_only(f"'{name}' only tests")


def reader_rules() -> dict[str, ProgramRule]:
    grammars = {
        "cat": CAT, "tac": TAC, "head": HEAD, "more": MORE, "ls": LS, "dir": LS, "stat": STAT,
        "file": FILE, "wc": WC, "cut": CUT, "tr": TR, "sort": SORT, "comm": COMM, "diff": DIFF,
        "cmp": CMP, "column": COLUMN, "nl": NL, "rev": REV, "fold": FOLD, "expand": EXPAND,
        "unexpand": EXPAND, "od": OD, "hexdump": HEXDUMP, "base64": BASE64, "base32": BASE64,
        "numfmt": NUMFMT, "readlink": READLINK, "realpath": REALPATH, "basename": BASENAME,
        "dirname": DIRNAME, "tail": TAIL, "grep": GREP, "egrep": GREP, "fgrep": GREP, "zgrep": GREP,
        "zcat": ZCAT, "bzcat": ZCAT, "xzcat": ZCAT, "zstdcat": ZCAT, "du": DU, "df": DF,
        "paste": PASTE, "join": JOIN, "seq": SEQ, "tree": TREE, "yq": YQ,
    }  # fmt: skip
    rules: dict[str, ProgramRule] = {name: reader(spec) for name, spec in grammars.items()}
    checksums = word_set("md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum")
    rules.update(dict.fromkeys(checksums, reader(CHECKSUM)))
    rules.update(dict.fromkeys(PRINTERS, _printer))
    rules.update(
        {"uniq": _uniq, "less": _less, "strings": _strings, "xxd": _xxd, "jq": _jq,
         "printf": _printf, "test": _test, "[": _test}
    )  # fmt: skip
    return rules
