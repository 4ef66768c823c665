"""Scout's agent, in rooms named for what they hold.

- `loop/`: the conversation engine: session turns, the batch executor, calls, model clients,
  transcript events, the recorder and the transcript file, what a resumed session starts from.
- `safety/`: what may run: the shell risk classifier and the ShellJudge tools get (`shell/`),
  modes, approval rules, the plan gate, approval requests and decisions, the approvers
  (terminal, webhook, scripted), redaction.
- `world/`: what Scout knows about the cluster: the world model (the tools' world store) and its
  rendering.
- `replay/`: recordings: the local Messages-API server and its SSE, the replay client,
  re-driving a recording against the simulator, rebuilding a session from its transcript.
- `runtime/`: settings, prompts and the one builder that makes a session's parts in order.
- `faces/`: how people use it: the CLI, chat, headless run, demo, doctor, init, recon, rendering.

Imports run one way: faces → replay → runtime → safety/world → loop → `tools`
(tests/unit/test_layers.py checks it).
"""
