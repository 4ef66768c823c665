"""Putting a session together: settings (one place for every default), the system prompt, and
the builder that wires tools, gate, recorder and model client into a ready session."""
