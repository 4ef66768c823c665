"""Docker for docker_ctl: input checks, command building, output rows, failure explanations, and
the rows as world-model facts (`world_facts`)."""
