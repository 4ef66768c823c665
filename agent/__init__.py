"""Scout's agent: the loop and what it keeps (session, model clients, executor, approvals,
todo, world model, transcript) and the faces people use."""
