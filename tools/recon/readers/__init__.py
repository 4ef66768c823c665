"""From the probe's sections to fact groups, one module per concept, each using the parsers.

`section_reader` reads one section with its provenance; `system`, `gpu`, `docker`, `fabric` and
`services` build the groups that `tools/recon/probe_parse.facts_from_sections` puts together.
"""
