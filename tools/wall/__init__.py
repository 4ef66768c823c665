"""The wall: what runs on a host without a human runs inside limits the host's kernel enforces.

`host_helper.py` is the program Scout sends (python3, standard library only) and runs around a
read: Landlock read-only, seccomp on sockets, root powers dropped, no_new_privs. `command.py`
puts a command line inside it (the helper cached on the host by its hash); `limits.py` says, per
class, what the wall stops and what it cannot; `hosts.py` keeps, per host, whether reads there
run inside the wall, and the narrow allow-list that holds where they cannot.
"""

from tools.wall.command import WallSpec, unwalled_reason
from tools.wall.hosts import HostWalls

__all__ = ["HostWalls", "WallSpec", "unwalled_reason"]
