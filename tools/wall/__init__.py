"""The wall: what runs on a host without a human runs inside limits the host's kernel enforces.

`host_helper.py` (with `host_landlock.py`, `host_seccomp.py`, `host_netfilter.py`) is what
Scout sends (python3, standard library only) and runs around a read: Landlock read-only with
devices closed, seccomp on sockets, IPC and keys, a cgroup-BPF address filter, a PID
namespace, root powers dropped, no_new_privs; `host_server.py` keeps it warm, one per SSH
connection, and forks it per call (tools/ssh/wall_server.py speaks to it);
`host_job_reader.py` is the job status read that stays running inside it, one per connection,
and answers polls (tools/jobs/walled_read.py). `command.py` puts a
command line inside it (the helper cached on the host by its hash); `limits.py` is the matrix
of what it stops per channel and kernel, and where it cannot; `daemons.py` the reads it
cannot answer truly (they run as exact shapes outside it, or ask); `denied.py` a read the
kernel refused; `hosts.py` keeps, per host, whether reads there run inside the wall, and the
narrow allow-list that holds where they cannot.
"""

from tools.wall.command import WallSpec, unwalled_reason
from tools.wall.hosts import HostWalls

__all__ = ["HostWalls", "WallSpec", "unwalled_reason"]
