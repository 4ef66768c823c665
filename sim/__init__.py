"""Scout's simulated DGX Spark cluster: scenarios as data, fake tools, SSH servers."""
