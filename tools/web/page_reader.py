"""Reading pages in worker processes that a deadline can stop.

Extracting a hostile page can take minutes of CPU (deeply nested tags) and nothing in a thread
can be stopped; so pages are read by `tools.web.page_worker` processes. A worker that misses the
deadline, or whose read is cancelled, is killed and replaced on next use: the event loop only
waits on pipes, and no thread of the loop's pool (which DNS lookups need) is ever held.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys

from tools.web.errors import WebFetchError
from tools.web.page_worker import FRAME_HEADER, READY
from tools.web.reading import PageReading

WORKER_START_TIMEOUT_S = 60.0
MAX_ANSWER_BYTES = 256 * 1024 * 1024
DEFAULT_WORKERS = 2


class PageReadError(WebFetchError):
    """The page could not be read: too complex for the deadline, or it broke the reader."""


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, header: bytes, body: bytes) -> bytes:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(FRAME_HEADER.pack(len(header)) + header)
        stdin.write(FRAME_HEADER.pack(len(body)) + body)
        await stdin.drain()
        return await self.read_frame()

    async def read_frame(self) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        (length,) = FRAME_HEADER.unpack(await stdout.readexactly(FRAME_HEADER.size))
        if length > MAX_ANSWER_BYTES:
            raise ValueError(f"a page reader answered {length} bytes")
        return await stdout.readexactly(length)

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        if self.process.stdin is not None:
            self.process.stdin.close()  # the last open pipe: its transport can now finish
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process.wait(), 10)


class PageReader:
    """Reads pages for one session in up to `workers` processes, each read bounded by
    `deadline_s`; `aclose` ends the processes."""

    def __init__(self, deadline_s: float, *, workers: int = DEFAULT_WORKERS) -> None:
        self.deadline_s = deadline_s
        self._workers = workers
        self._slots: asyncio.Semaphore | None = None
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()

    async def read(
        self, body: bytes, media_type: str, charset: str | None, url: str, select: str | None
    ) -> PageReading:
        """The page's reading; PageReadError when it cannot be had within the deadline."""
        header = json.dumps(
            {"media_type": media_type, "charset": charset, "url": url, "select": select}
        ).encode()
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._workers)
        async with self._slots:
            worker = self._idle.pop() if self._idle else await self._start()
            self._busy.add(worker)
            reusable = False
            try:
                async with asyncio.timeout(self.deadline_s):
                    raw = await worker.ask(header, body)
                reusable = True
            except TimeoutError:
                raise PageReadError(
                    f"the page could not be read within {self.deadline_s:g} s (its markup is too "
                    "complex); fetch a simpler copy: a raw file, a README or a printable page"
                ) from None
            except (OSError, EOFError, ValueError, asyncio.IncompleteReadError):
                raise PageReadError(
                    "the page broke the page reader (it stopped while reading it); fetch a "
                    "simpler copy: a raw file, a README or a printable page"
                ) from None
            finally:
                self._busy.discard(worker)
                if reusable:
                    self._idle.append(worker)
                else:
                    await worker.kill()
        return _reading(raw)

    async def _start(self) -> _Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tools.web.page_worker",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        worker = _Worker(process)
        try:
            async with asyncio.timeout(WORKER_START_TIMEOUT_S):
                ready = await worker.read_frame()
        except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError):
            await worker.kill()
            raise PageReadError(
                "the page reader process did not start; check that Scout is installed "
                f"completely (`{sys.executable} -m tools.web.page_worker` must run)"
            ) from None
        if ready != READY:
            await worker.kill()
            raise PageReadError("the page reader process started wrongly; reinstall Scout")
        return worker

    async def aclose(self) -> None:
        workers = [*self._idle, *self._busy]
        self._idle.clear()
        self._busy.clear()
        for worker in workers:
            await worker.kill()


def _reading(raw: bytes) -> PageReading:
    try:
        answer = json.loads(raw)
        if "error" in answer:
            raise PageReadError(f"{answer['error']}; fetch a simpler copy of the page")
        return PageReading.from_json(answer)
    except (ValueError, TypeError, AttributeError):
        raise PageReadError("the page reader gave an answer that makes no sense") from None
