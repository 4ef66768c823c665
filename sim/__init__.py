"""Scout's simulated DGX Spark cluster: scenarios as data, fake tools, SSH servers.

How a command reaches a fake tool, and what it costs:

    SSH exec (sim/cluster.py, asyncssh on 127.0.0.1; workers only through the head)
      → the host's tool server launches the command (sim/host_command.py): forked below the
        server in a session of its own, walled in (sim/fakehost/confinement.py), it runs
        HOST_DIR/sandbox/launch: restricted bash, PATH = HOST_DIR/bin only (`sh -c` scripts:
        an unrestricted bash inside the same wall)
        → HOST_DIR/bin/nvidia-smi: a tiny client (sim/fakehost/client.py) that hands its argv,
          cwd, environment and stdin/stdout/stderr (as descriptors) to …
          → the host's tool server (sim/fakehost/server.py, started by sim/tool_servers.py):
            one long-lived process per host with every fake tool imported; it forks a child per
            command, which writes straight into the client's streams and exits with the tool's
            status. Signals to the client are passed on; a killed client kills its tool.

A fake command used to start a fresh interpreter and import the tools (~65 ms of CPU; a probe
pack of ~33 tools cost ~3.2 CPU-s per host). Now the client's interpreter start (~10 ms) and
the fork (~4 ms) are what is left: ~0.5 CPU-s per host per probe pack, so 64 hosts recon on two
cores in well under the probe timeout (bench/recon_scale.py prints the figures).

The sandbox, from the outside in: the server and all it starts may write only in the
simulator's hosts folder and signal nothing outside the host (Landlock); a command may write
only in its host's home and tmp folders, create no socket (seccomp), connect or bind no TCP
port, and run only the host's programs; restricted bash on top for SSH commands. A command's
clients reach the server through a socketpair end they hand over the broker descriptor the
server gave the command; the server's socket (HOST_DIR/run/, mode 0700) serves the simulator.
Whatever a command leaves running stays below the server (a subreaper) and dies with it. A host
folder used without a server (e.g. bind-mounted under a real sshd) runs each tool in its client.
"""
