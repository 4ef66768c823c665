"""Durable jobs on hosts: commands started detached, in their own session and process group,
with a job folder on the host (command, start time, pid, combined log, exit status).

folder.py names the folder; scripts.py holds the shell Scout sends to start, read logs and stop
(the same on every host) and status_script.py the one-awk status read; records.py reads what
the status script prints; progress/ reads the logs of the tools this field runs; host.py runs
the scripts over the SSH pool; waiting.py waits without model turns; render.py writes what the
model reads; params.py checks the tools' inputs. The tools the model calls are tools/job_*.py.
"""
