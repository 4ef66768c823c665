"""Durable jobs on hosts: commands started detached, in their own session and process group,
with a job folder on the host (command, start time, pid, combined log, exit status).

folder.py names the folder; scripts.py holds the shell Scout sends (the same on every host);
records.py reads what the status script prints; progress/ reads the logs of the tools this
field runs; host.py runs the scripts over the SSH pool; waiting.py waits without model turns.
The tools the model calls are tools/job_*.py.
"""
