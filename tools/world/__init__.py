"""The world's types, on the ground floor: what every other part of tools/ reads and hands over.

Probed host facts (`facts`), findings about them (`findings`), durable jobs (`jobs`), the model's
notes (`notes`), what Scout measured itself (`measurements`: endpoints, fabric tests) and the
store that holds them all (`store`). pydantic and the standard library only: nothing here imports
another part of tools/, so every part can import this.
"""
