"""Every tool the model can call, one module each at this root, named as the tool, and the
parts they stand on in subpackages.

At the root: `base` is the contract (Tool, ToolResult, the typed ToolContext), `registry` the
tools by name, `schema` a tool's schema as the model reads it, and the tools themselves. Below:
`world` the world's types (the ground floor: pydantic only), `risk` the risk levels and the
shell judge, `plans` a plan and its approval record, `text` bounded output and one-line errors,
and each tool's parts (`ssh`, `jobs`, `web`, `docker`, `recon`, `checks`, `deploy`, `wall`).
Imports run down: a subpackage never imports a module at this root, and nothing here imports
`agent` (the agent's implementations are handed in by its builder).
"""
