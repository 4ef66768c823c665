"""What acts on the world: SSH, the web, Docker, recon and deployment helpers.

Nothing here imports `agent`: tools are plain parts the agent loop drives.
"""
