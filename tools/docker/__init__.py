"""Docker for docker_ctl: input checks, command building, output rows, failure explanations."""
