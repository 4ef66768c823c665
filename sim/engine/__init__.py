"""The serving side of the simulated cluster: a started engine becomes a real HTTP endpoint.

`pacing` says how fast tokens come, `openai_server` speaks the OpenAI-compatible HTTP API on
127.0.0.1, and `endpoints` keeps one server per `serve` record found in the hosts' state.
"""
