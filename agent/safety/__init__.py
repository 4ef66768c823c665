"""Safety: nothing changes a host without a rule or a human.

`shell/` judges a shell command's risk by parsing it (`shell/judge` is the ShellJudge the tools
that run shell are given); `rules` are the operator's allow/ask/deny rules; `gate` is the policy
gate every call passes (`modes`, the plan gate, approvers); `approvals` holds requests, decisions
and fingerprints; `approvers/` answers them (terminal, webhook, scripted); `redact` masks secrets
before anything leaves.
"""
