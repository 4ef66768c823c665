"""`scout replay`: re-render a recorded session, or re-drive it against the simulator.

FILE is a transcript file or the name of a recording that ships with Scout (`seed-pair-deploy`).
With a scenario, every recorded call runs again for real and the run is compared with the
recording: exit 0 only when every recorded model turn was replayed without drift.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from rich.console import Console

from agent.faces.console import screen_console
from agent.faces.render import EventRenderer, print_report
from agent.loop.events import Event, SessionStart
from agent.loop.recorder import SessionListener
from agent.loop.transcript import NotATranscript, read_session_file
from agent.replay.recordings import missing_message, recording_path

EXIT_OK, EXIT_ERROR = 0, 1


def _fail(message: str) -> int:
    print(f"scout replay: {message}", file=sys.stderr)
    return EXIT_ERROR


def replay_main(name_or_path: str, *, verbose: bool, scenario: str | None) -> int:
    with recording_path(name_or_path) as path:
        if path is None:
            return _fail(missing_message(name_or_path))
        return _replay_file(path, verbose=verbose, scenario=scenario)


def _replay_file(path: Path, *, verbose: bool, scenario: str | None) -> int:
    try:
        loaded = read_session_file(path)
    except NotATranscript as exc:
        return _fail(str(exc))
    console = screen_console()
    err = Console(stderr=True, highlight=False)
    for problem in loaded.problems:
        err.print(f"warning: {path}: {problem}", style="yellow", markup=False, soft_wrap=True)
    renderer = EventRenderer(console, verbose=verbose)
    if scenario:
        recorded_on = next((e.scenario for e in loaded.events if isinstance(e, SessionStart)), None)
        if recorded_on and recorded_on != scenario:  # a question worth asking: a warning only
            err.print(
                f"warning: {path} was recorded on scenario {recorded_on}, not {scenario}: "
                "expect drift",
                style="yellow",
                markup=False,
                soft_wrap=True,
            )
        return _redrive(loaded.events, scenario, renderer, console)
    for event in loaded.events:
        renderer.render(event)
    return EXIT_OK


def _redrive(events: list[Event], scenario: str, renderer: EventRenderer, console: Console) -> int:
    from agent.replay.client_calls import is_client_session, redrive_client_calls
    from agent.replay.redrive import redrive
    from sim.scenario import ScenarioError

    class Show(SessionListener):
        def on_event(self, event: Event) -> None:
            renderer.render(event)

    if is_client_session(events):  # an MCP client's calls, not a model's turns
        try:
            calls = asyncio.run(redrive_client_calls(events, scenario, listeners=[Show()]))
        except ScenarioError as exc:
            return _fail(str(exc))
        console.print(calls.describe())
        return EXIT_OK if calls.clean else EXIT_ERROR
    try:
        result = asyncio.run(redrive(events, scenario, listeners=[Show()]))
    except ScenarioError as exc:
        return _fail(str(exc))
    console.print(result.report.describe())
    check = result.endpoint_check()
    if check is not None:
        print_report(console, check.text)
    return EXIT_OK if result.report.clean else EXIT_ERROR
