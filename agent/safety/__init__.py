"""Safety: nothing changes a host without a rule or a human.

`shell/` judges a shell command's risk by parsing it (read-only only when fully understood;
`shell/judge` is the ShellJudge the tools that run shell are given);
`risk` judges a whole call; `rules` (with `command_patterns` and `word_globs`) are the operator's
allow/ask/deny rules, matched on the parsed command so they never widen, and `session_rules`
makes the one an `a` answer adds; `policy` answers allow/ask/deny before any human; `gate` is the
policy gate every call passes (`modes`, the plan gate, steps approved with the plan (the plan
state's grant, tools/plans/approval.py), approvers);
`approvals` holds requests, decisions and fingerprints; `approvers/` answers them (terminal,
webhook, scripted); `display` makes control characters visible and `redact` masks secrets
before anything leaves, by class: `secret_blocks` (private keys), `secret_tokens` (vendor
prefixes), `secret_patterns` (values by where they stand), judging names with `secret_names`.
"""
