"""Text Scout hands over: output bounded for the model with the rest spilled to a file
(`bounded`), pydantic's errors as `where: what` lines (`validation`), YAML read so that a syntax
error names its line (`yaml_files`), and the files a session writes created under names no
other file has (`new_files`).
"""
