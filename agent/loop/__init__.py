"""The loop: one user message in, streamed model turns and tool batches out, every step recorded.

`session` runs turns; `executor` runs a turn's calls as one gated, concurrent batch; `calls`
holds the call types and the gate protocol; `model_turn` is a turn as data and what a model
client is; `model_client` streams turns through the SDK, imported only where one is built
(`scripted_client` answers from a script in process, for tests that do not need the SDK);
`events`, `recorder` and `transcript` are the record of it all; `redaction` is what the loop asks
of redaction; `resumed` what a resumed session starts from; `pricing` turns usage into cost.
The loop imports nothing of the agent's other rooms, only `tools`.
"""
