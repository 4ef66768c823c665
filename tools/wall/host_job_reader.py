"""The job status read, resident inside the wall: one interpreter per connection answers polls.

A status poll over a new SSH session costs the host a session, a login shell, `timeout` and an
awk start, for a read of a few small files (bench/jobs.py). Here the read runs in one python3
started once per connection inside the wall, as a walled call on the connection's fork-server
(host_server.py OPEN): the same Landlock, seccomp, PID namespace and dropped powers as any
read, built once. Each poll is then one request line on its stdin and the records on its
stdout: no session, no shell, no exec.

It prints exactly what the awk program of tools/jobs/status_script.py prints (the records
tools/jobs/records.py reads), byte for byte as awk under LC_ALL=C does: the same files in the
same order, the same liveness check (the runner's /proc stat start time against the one it
recorded), the log read once for its size, milestone lines, and last bytes. The limits and the
milestone pattern come on its command line from that module, so they have one source.

    python3 -I -S -c LAUNCH HELPER_DIR read-jobs ROOT TAIL LINES CHARS COMMAND MILESTONES

prints READY_LINE, then answers each request `TOKEN NUL NAME NUL NAME ... NEWLINE` with the
records of the jobs ROOT/NAME, ending in `TOKEN end` (or, where a file could not be read for
its permissions, only `TOKEN denied PATH` before it: no record built on a denied read). A
poll that waits for a pattern
(job_wait's `until`, a POSIX ERE) is not read here: awk's regular expressions are not
Python's.

Standard library only, Python 3.8+: it runs on the host (tools/wall/command.py ships it).
"""

from __future__ import annotations

import re
import sys

READY_LINE = b"@@scout-jobs reading\n"
DENIED = b" denied "  # TOKEN denied PATH: a file the wall (or the host) would not let it read
_STAT_HEAD = re.compile(rb".*\) ")


def _first(path: bytes) -> bytes:
    """The file's first line without its newline; empty where there is none (awk's
    `getline line < path`). A PermissionError goes up: a read denied is no empty file."""
    try:
        with open(path, "rb") as f:
            return f.readline().rstrip(b"\n")
    except PermissionError:
        raise
    except OSError:
        return b""


def _lines(path: bytes) -> list[bytes]:
    """Every line of the file, as awk's getline loop reads them (a last line without its
    newline is a line)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except PermissionError:
        raise
    except OSError:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        lines.pop()
    return lines


def _same(a: bytes, b: bytes) -> bool:
    """awk's `==` on two fields: numerically when both look like numbers."""
    if a.isdigit() and b.isdigit():
        return int(a) == int(b)
    return a == b


def _clip(text: bytes, n: int) -> bytes:
    return text[-n:] if len(text) > n else text


class Reader:
    """The program's limits and milestone pattern; `records` is one poll."""

    def __init__(self, root: bytes, args: list[bytes]) -> None:
        tail, lines, chars, command, milestones = args
        self.root = root
        self.tail, self.lines, self.chars = int(tail), int(lines), int(chars)
        self.command = int(command)
        self.milestones = re.compile(milestones)

    def records(self, token: bytes, names: list[bytes]) -> bytes:
        out: list[bytes] = []
        uptime = _first(b"/proc/uptime").split(b".")[0]
        out.append(token + b" uptime " + uptime)
        for name in names:
            self._job(out, token, self.root + b"/" + name)
        out.append(token + b" end")
        return b"\n".join(out) + b"\n"

    def _job(self, out: list[bytes], t: bytes, d: bytes) -> None:
        def fact(f: bytes) -> bytes:
            v = _first(d + b"/" + f)
            if v:
                out.append(t + b" " + f + b" " + v)
            return v

        def ended() -> None:
            fact(b"ended")
            fact(b"endup")
            fact(b"stop")

        out.append(t + b" job " + d.rsplit(b"/", 1)[-1])
        text = b"".join(line + b"\n" for line in _lines(d + b"/command"))
        if not fact(b"started") and not text:
            out.append(t + b" missing")
            return
        fact(b"startup")
        code = fact(b"exit")
        pid, since = fact(b"pid"), fact(b"pidstart")
        if code:
            ended()
        elif self._alive(pid, since):
            out.append(t + b" alive")
        elif fact(b"exit"):  # it ended while this read
            ended()
        else:
            fact(b"stop")
        size, kept, tail = self._log(d + b"/log")
        out.append(t + b" size " + str(size).encode())
        out += [t + b" command", text[: self.command]]
        out += [t + b" milestones", *kept]
        out += [t + b" tail", tail]

    @staticmethod
    def _alive(pid: bytes, since: bytes) -> bool:
        if not pid:
            return False
        stat = _first(b"/proc/" + pid + b"/stat")
        if not stat:
            return False
        parts = _STAT_HEAD.sub(b"", stat, count=1).split()
        return not since or _same(parts[19] if len(parts) > 19 else b"", since)

    def _log(self, path: bytes) -> tuple[int, list[bytes], bytes]:
        """The log's size, its last milestone lines, and its last bytes."""
        lines = _lines(path)
        kept = [
            _clip(line, self.chars) if b"\r" in line else line[: self.chars]
            for line in lines
            if self.milestones.search(line)
        ][-self.lines :]
        size = sum(len(line) + 1 for line in lines)
        tail = _clip(b"".join(line + b"\n" for line in lines[-self.tail - 1 :]), self.tail)
        return size, kept, tail


def serve(args: list[str]) -> int:
    """Answer requests on stdin until it ends."""
    words = [arg.encode("utf-8", "surrogateescape") for arg in args]
    reader = Reader(words[0], words[1:])
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(READY_LINE)
    stdout.flush()
    for request in iter(stdin.readline, b""):
        token, *names = request.rstrip(b"\n").split(b"\0")
        try:
            answer = reader.records(token, [n for n in names if n and b"/" not in n])
        except PermissionError as exc:  # say so: the caller reads them outside the wall
            path = exc.filename if isinstance(exc.filename, bytes) else b"?"  # paths are bytes
            answer = token + DENIED + path + b"\n" + token + b" end\n"
        stdout.write(answer)
        stdout.flush()
    return 0
