"""Progress bars printed the way tqdm prints them into a file: each state after a \\r.

Layout from the real captures: `file.gguf: 100%|███| 4.92G/4.92G [00:04<00:00, 212MB/s]`
(tests/fixtures/jobs/hf_download_cli_0.23.4_…), `Fetching 17 files:   0%|          | 0/17
[00:00<?, ?it/s]` with an ASCII bar when there is no terminal (…hub1.5_nontty_…), and vLLM's
`Loading safetensors checkpoint shards:  12% Completed | 10/86 [11:08<2:17:15, 108.36s/it]`
(vllm_serve_multinode_ray_405b_fp8_slow_shard_loading.txt).
"""

from __future__ import annotations

WIDTH = 10


def clock(seconds: float) -> str:
    seconds = int(seconds)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def si(value: float, suffix: str = "") -> str:
    """tqdm's unit_scale: three significant digits and a decimal prefix (4.92G, 212M, 0.00)."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{prefix}{suffix}"
    return f"{value:.2f}{suffix}" if value < 1 else f"{value:.3g}{suffix}"


def bar(desc: str, done: float, total: float, elapsed: float, *, bytes_: bool) -> str:
    """One state of a bar with a total."""
    fraction = min(1.0, done / total) if total else 0.0
    cells = fraction * WIDTH
    full = int(cells)
    digit = int((cells - full) * 10)  # tqdm's ASCII bar: " 123456789#"
    partial = str(digit) if full < WIDTH and digit else ""
    drawn = ("#" * full + partial).ljust(WIDTH)
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else None
    if bytes_:
        counts = f"{si(done)}/{si(total)}"
        speed = f"{si(rate, 'B/s')}" if rate else "?B/s"
    else:
        counts = f"{int(done)}/{int(total)}"
        speed = f"{rate:.2f}it/s" if rate >= 1 else (f"{1 / rate:.2f}s/it" if rate else "?it/s")
    remaining = clock(left) if left is not None else "?"
    pct = round(fraction * 100)
    return f"{desc}: {pct:3d}%|{drawn}| {counts} [{clock(elapsed)}<{remaining}, {speed}]"


def open_bar(desc: str, done: float, elapsed: float) -> str:
    """A byte bar without a total: `Download complete: : 0.00B [00:00, ?B/s]`."""
    rate = done / elapsed if elapsed > 0 else 0.0
    speed = si(rate, "B/s") if rate else "?B/s"
    return f"{desc}: {si(done, 'B')} [{clock(elapsed)}, {speed}]"


def shards(done: int, total: int, elapsed: float) -> str:
    """vLLM's checkpoint loading line."""
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else None
    speed = f"{rate:.2f}it/s" if rate >= 1 else (f"{1 / rate:.2f}s/it" if rate else "?it/s")
    remaining = clock(left) if left is not None else "?"
    pct = round(100 * done / total) if total else 0
    return (
        f"Loading safetensors checkpoint shards: {pct:3d}% Completed | {done}/{total} "
        f"[{clock(elapsed)}<{remaining}, {speed}]"
    )
