"""Putting a session together: settings (one place for every default), the system prompt, and
`builder`, the one builder that makes the recorder first and then every part with what it needs.
The runtime never imports the faces or the replay room."""
