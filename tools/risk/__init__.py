"""Risk: the levels a call can have (`assessment`) and the judge a tool asks about shell
(`shell_judge`), and what of the host a container may
get (`container_access`). The gate decides on these; a tool's `risk()` returns them.
"""
