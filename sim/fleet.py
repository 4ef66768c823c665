"""N-host variants of a scenario for benches: its head plus N−1 copies of its first worker.

Every copy is reached through the head, like the seed's worker. A copy differs from the worker
only where two real machines must: name, hostname, addresses (management and fabric, one step
up per copy), MACs, GPU UUIDs and InfiniBand LIDs. Loopback and the docker bridge keep their
addresses, as on any host. Names continue the head's letter (`spark-a` → spark-b … spark-z,
spark-aa, …); a head not named that way gets `WORKER-2`, `WORKER-3`, ….
"""

from __future__ import annotations

import ipaddress
import re

from sim.scenario import Host, Scenario, ScenarioError

MAX_HOSTS = 200
MAX_LID = 0xC000  # unicast LIDs end at 0xBFFF


def column_letters(index: int) -> str:
    """0 → a, 25 → z, 26 → aa, 31 → af (spreadsheet columns)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters


def _shift_ip(address: str, step: int) -> str:
    ip, _, prefix = address.partition("/")
    shifted = str(ipaddress.ip_address(ip) + step)
    return f"{shifted}/{prefix}" if prefix else shifted


def _shift_mac(mac: str, step: int) -> str:
    octets = [int(part, 16) for part in mac.split(":")]
    low = (octets[4] << 8 | octets[5]) + step * 0x10
    octets[4], octets[5] = (low >> 8) & 0xFF, low & 0xFF
    return ":".join(f"{o:02x}" for o in octets)


def _shift_hex_tail(text: str, step: int, digits: int) -> str:
    match = re.search(rf"[0-9a-f]{{{digits}}}$", text)
    if match is None:
        return f"{text}-{step}"
    value = (int(match.group(), 16) + step) % 16**digits
    return text[: match.start()] + f"{value:0{digits}x}"


def copy_of(worker: Host, step: int) -> Host:
    """The worker as the `step`-th copy (step 0 is the worker itself)."""
    host = worker.model_copy(deep=True)
    if step == 0:
        return host
    host.address = _shift_ip(worker.address, step)
    host.hostname = _shift_hex_tail(worker.hostname, step, 4)
    host.gpu.uuid = _shift_hex_tail(worker.gpu.uuid, step, 12)
    for nic in host.nics.values():
        if nic.kind in ("loopback", "bridge"):
            continue
        nic.mac = _shift_mac(nic.mac, step)
        if nic.lid is not None:  # InfiniBand LIDs are unique in the subnet
            nic.lid = (nic.lid + 3000 * step) % MAX_LID or 1
        nic.addresses = [a if ":" in a else _shift_ip(a, step) for a in nic.addresses]
    return host


def fleet(seed: Scenario, size: int) -> Scenario:
    """`seed`'s head and its first worker copied until there are `size` hosts."""
    if not 2 <= size <= MAX_HOSTS:
        raise ScenarioError(f"a fleet has 2 to {MAX_HOSTS} hosts, not {size}")
    head = seed.head
    workers = [name for name in seed.hosts if name != head]
    if not workers:
        raise ScenarioError(f"scenario {seed.name} has no worker to copy")
    worker = seed.hosts[workers[0]]
    named = re.fullmatch(r"(?P<stem>.*-)a", head)
    hosts = {head: seed.hosts[head].model_copy(deep=True)}
    for step in range(size - 1):
        name = f"{named['stem']}{column_letters(step + 1)}" if named else f"{workers[0]}-{step + 1}"
        hosts[name] = copy_of(worker, step)
    return Scenario(
        name=f"{seed.name}-x{size}",
        description=f"{seed.name} with {size - 1} copies of {workers[0]}, all through {head}",
        user=seed.user,
        hosts=hosts,
    )
