"""Every tool the model can call, one concept per module, and the parts they stand on.

`base` is the contract (Tool, `risk()` → RiskAssessment, ToolResult, the typed ToolContext);
what a tool gets from the session is typed here too: `session_state`, `world_store`,
`page_fetcher`, and `shell_judge` for tools that run shell. Nothing here imports `agent`: the
agent's implementations are handed in by its builder.
"""
