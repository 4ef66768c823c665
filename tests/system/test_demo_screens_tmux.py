"""`scout demo` as a person sees it at 80 and 120 columns: screens that tell the truth.

The plan is approved from one 40-row screen (one line a step; `c` shows every command, then
asks again); no progress bar stays frozen in the scrollback or reaches piped output; after the
rollout the findings neither contradict themselves nor hold Scout's own engine against it; the
rows say what each call did (no raw JSON; the recipe the plan chose).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tmux import TmuxScreen, tmux_missing
from tests.support.waiting import until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(tmux_missing() is not None, reason=tmux_missing() or ""),
]

SCOUT = f"{os.path.dirname(sys.executable)}/scout"
ROWS = 40
PLAN_PROMPT = "approve? [y]es / [s]teps too / [n]o / [e]dit / [c]ommands ›"
STEP_LINE = re.compile(r"│\s*(\d+)\. (spark-[ab]) \S")
AVAILABLE = re.compile(r"(spark-[ab]): (\d+) GB available for a model")


def start(screen: TmuxScreen, home: Path, args: str) -> None:
    env = f"SCOUT_HOME={home} NO_COLOR=1"
    screen.start(f'env {env} {SCOUT} demo --fast {args}; echo "exit=$?"; sleep 60')


def plan_panel(lines: list[str]) -> list[str]:
    """The last plan panel in `lines`: from its top border to its bottom one."""
    heading = max(i for i, line in enumerate(lines) if "propose_plan: " in line)
    top = max(i for i in range(heading) if lines[i].startswith("╭"))
    bottom = next(i for i in range(heading, len(lines)) if lines[i].startswith("╰"))
    return lines[top : bottom + 1]


async def asked_again(screen: TmuxScreen) -> None:
    await until(
        lambda: screen.visible()[-1].strip() == PLAN_PROMPT, "the plan to be asked about again"
    )


@pytest.mark.parametrize("width", [80, 120])
async def test_the_plan_fits_one_screen_and_c_shows_its_commands(
    tmp_path: Path, width: int
) -> None:
    screen = TmuxScreen(tmp_path / "tmux.sock", width=width, height=ROWS)
    start(screen, tmp_path / "home", "--interactive")
    try:
        await screen.wait_for(PLAN_PROMPT)
        shown = screen.visible()
        assert shown[-1].strip() == PLAN_PROMPT
        panel = plan_panel(shown)  # the whole panel is on the screen, with the prompt under it
        steps = [STEP_LINE.search(line) for line in panel]
        assert [int(m.group(1)) for m in steps if m] == list(range(1, 13))
        assert "$ " not in "\n".join(panel)  # no command yet: `c` shows them
        assert "risk: plan" not in "\n".join(panel)  # the goal is said once
        mark = len(screen.screen().rstrip())
        screen.send("c", "Enter")
        await screen.wait_for("$ docker stop vllm_node", after=mark)
        await asked_again(screen)
        details = " ".join(screen.screen()[mark:].split())
        for command in ("$ docker pull nvcr.io/nvidia/vllm:26.05-py3", "rollback: docker rm -f"):
            assert command in details
        screen.send("n", "Enter")
        await screen.wait_for("tell the agent why (optional) ›", after=mark)
        screen.send("Enter")
        final = await screen.wait_for("exit=")
        assert "exit=2" in final and "Traceback" not in final
    finally:
        screen.kill()


@pytest.mark.parametrize("width", [80, 120])
async def test_the_whole_demo_tells_the_truth(tmp_path: Path, width: int) -> None:
    screen = TmuxScreen(tmp_path / "tmux.sock", width=width, height=ROWS)
    start(screen, tmp_path / "home", "")
    try:
        shown = await screen.wait_for("exit=", timeout=240)
    finally:
        screen.kill()
    assert "exit=0" in shown, shown
    lines = shown.splitlines()
    panel = plan_panel(lines)
    assert len(panel) + 1 <= ROWS  # with the answer's line, one screen

    assert "━" not in shown  # no bar left frozen: each job ends as a line
    assert not [line for line in lines if re.search(r"scout-(rank-1|serve)\s.*\d+s", line)]

    step_12 = "✓ approved by plan approval: step 12 as approved with the plan"
    last_step = max(i for i, line in enumerate(lines) if step_12 in line)  # asked with the plan
    after = "\n".join(lines[last_step:])  # the rollout's end and re-probe
    assert "scout-vllm holds" not in after  # Scout's own engine is no finding against it
    available: dict[str, set[str]] = {}
    for host, amount in AVAILABLE.findall(after):
        available.setdefault(host, set()).add(amount)
    assert available and all(len(amounts) == 1 for amounts in available.values()), available

    rows = {tool: line for line in lines for tool in ("endpoint_check", "plan_deploy") if
            re.match(rf"✓ \S+( \+\d)?\s+{tool}", line)}  # fmt: skip
    assert "{" not in rows["endpoint_check"] and "spark-a:8000" in rows["endpoint_check"]
    assert "vllm-multinode" in rows["plan_deploy"] and "vllm-ray" not in rows["plan_deploy"]


def test_piped_output_carries_no_bars(tmp_path: Path) -> None:
    env = {**os.environ, "SCOUT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    done = subprocess.run(
        [SCOUT, "demo", "--fast"], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "━" not in done.stdout and "\x1b[" not in done.stdout
    assert "✓ job spark-a/pull-image exited 0" in done.stdout  # each job's end stays
