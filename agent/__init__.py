"""Scout's agent, in rooms named for what they hold.

- `loop/`: the conversation engine: session turns, the batch executor, calls, model clients,
  transcript events, the recorder and the transcript file.
- `safety/`: what may run: the shell risk classifier (`shell/`), approval rules, the plan gate,
  approval requests and decisions, the approvers (terminal, webhook, scripted), redaction.
- `world/`: what Scout knows about the cluster: the world model, findings, rendering, feeds.
- `replay/`: recordings: the local Messages-API server and its SSE, the replay client,
  re-driving a recording against the simulator, resuming from a transcript.
- `runtime/`: settings, prompts and the one builder that wires a session from its parts.
- `faces/`: how people use it: the CLI, chat, headless run, demo, doctor, init, recon, rendering.

Imports run one way: faces → runtime → replay/safety/world → loop → `tools`.
"""
