"""Serving recipes as data: which image, engine flags, env and defaults a model is served with on
a kind of hardware, and the source of every line.

`bundled/` holds Scout's own library (YAML, package data); an operator's file, in Scout's format
or in spark-vllm-docker's community format (`community.py`), is read the same way (`load.py`).
The planner picks one (`choose.py`), keeps the flags the image's engine version knows
(`versions.py`), and sizes the context from the model's own config (`model_shape.py`).
`docs/playbook-flags.md` is rendered from these files (`python -m tools.deploy.recipe_book`).
"""
