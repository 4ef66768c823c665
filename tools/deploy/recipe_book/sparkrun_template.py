"""sparkrun's template step, as its source does it (spark-arena/sparkrun@0041b8f).

`Recipe.render_command` (src/sparkrun/core/recipe.py) fills the recipe's `command` with
`vpd.legacy.arguments.arg_substitute` (vpd 0.9.13) until nothing changes: every match of the
regex `\\{(.*?)\\}` is looked up with its braces stripped, and put back unchanged when the config
chain (CLI overrides, then the recipe's `defaults` with `model`) has no value. So a missing
`{key}` is no error but reaches the engine verbatim, and `{{`/`}}` is no escape: the JSON in
`'{{"method":"mtp"}}'` is passed with both braces, where spark-vllm-docker's `str.format` passes
one. It then mends `\\<space><newline>` into a line continuation.

A recipe with no `command` has one written by its runtime from `defaults`
(`_build_base_command` of runtimes/vllm_distributed.py and sglang.py with `VLLM_FLAG_MAP` and
`_SGLANG_FLAG_MAP`): Scout writes the same template, so both paths are filled alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_FIND_ARG = re.compile(r"\{(.*?)\}")  # vpd's `_find_arg_re`
_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")
_SERVE = re.compile(r"(?:^|[\s/])vllm\s+serve\b|\bsglang\.launch_server\b|(?:^|\s)sglang\s+serve\b")
_TRAILING_SPACE_CONTINUATION = re.compile(r"\\ +\n")
_ROUNDS = 64  # the runner loops until a fixpoint; a self-referring value would never reach one

# runtimes/_vllm_common.py VLLM_FLAG_MAP and VLLM_BOOL_FLAGS, in the runtime's order
VLLM_FLAGS = {
    "port": "--port",
    "host": "--host",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_model_len": "--max-model-len",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "max_num_seqs": "--max-num-seqs",
    "served_model_name": "--served-model-name",
    "dtype": "--dtype",
    "quantization": "--quantization",
    "enforce_eager": "--enforce-eager",
    "enable_prefix_caching": "--enable-prefix-caching",
    "trust_remote_code": "--trust-remote-code",
    "pipeline_parallel": "-pp",
    "data_parallel": "--data-parallel-size",
    "kv_cache_dtype": "--kv-cache-dtype",
    "otlp_traces_endpoint": "--otlp-traces-endpoint",
    "api_key": "--api-key",
}
VLLM_SWITCHES = frozenset(
    {"enforce_eager", "enable_prefix_caching", "trust_remote_code", "enable_auto_tool_choice"}
)
# runtimes/sglang.py _SGLANG_FLAG_MAP and _SGLANG_BOOL_FLAGS
SGLANG_FLAGS = {
    "port": "--port",
    "host": "--host",
    "pipeline_parallel": "--pp-size",
    "gpu_memory_utilization": "--mem-fraction-static",
    "max_model_len": "--context-length",
    "max_num_seqs": "--max-running-requests",
    "served_model_name": "--served-model-name",
    "dtype": "--dtype",
    "quantization": "--quantization",
    "trust_remote_code": "--trust-remote-code",
    "chunked_prefill": "--chunked-prefill-size",
    "kv_cache_dtype": "--kv-cache-dtype",
    "tokenizer_path": "--tokenizer-path",
    "speculative_draft_model_path": "--speculative-draft-model-path",
    "api_key": "--api-key",
}
SGLANG_SWITCHES = frozenset({"trust_remote_code", "enable_torch_compile", "disable_radix_cache"})
_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})


def fill_lenient(template: str, params: Mapping[str, object]) -> str:
    """The command as sparkrun renders it: `{key}` filled where the chain has a value, every
    other brace pair left as it is."""

    def one(match: re.Match[str]) -> str:
        value = params.get(match.group().strip("}{"))
        return str(value) if value is not None else match.group()

    rendered, last = template.strip(), None
    for _ in range(_ROUNDS):
        if rendered == last:
            break
        last, rendered = rendered, _FIND_ARG.sub(one, rendered)
    return _TRAILING_SPACE_CONTINUATION.sub("\\\n", rendered)


def serve_part(template: str) -> tuple[str, list[str]]:
    """The statement of a command script that starts the engine (`exec` dropped), and the
    script's other statements. sparkrun runs `command` as a bash script, so a recipe may export
    variables or prepare files before `exec vllm serve …`; Scout runs the engine's statement."""
    statements, current = [], ""
    for line in template.strip().splitlines():
        current += line + "\n"
        if not line.rstrip().endswith("\\"):
            statements.append(current.strip().rstrip(";").strip())
            current = ""
    statements += [current.strip()] if current.strip() else []
    statements = [s for s in statements if s and not s.startswith("#")]
    serving = [s for s in statements if _SERVE.search(s)]
    if not serving:
        return template, []
    serve = serving[-1]
    others = [s for s in statements if s is not serve]
    return re.sub(r"^exec\s+", "", serve), others


def unfilled(rendered: str) -> list[str]:
    """The `{name}`s left in a rendered command (passed to the engine as they are); other
    brace pairs (JSON a value carries) are text, not placeholders."""
    found = (m.group() for m in _FIND_ARG.finditer(rendered) if _NAME.match(m.group(1)))
    return list(dict.fromkeys(found))


def written_command(engine: str, defaults: Mapping[str, object]) -> str:
    """The template sparkrun's runtime writes for a recipe without `command`: every mapped key
    of `defaults` as its flag (a switch only when true); Scout's own keys (parallel sizes,
    memory, context, host, port) stay `{key}` so the plan fills them."""
    if engine == "sglang":
        words = ["python3 -m sglang.launch_server --model-path {model} --tp-size {tensor_parallel}"]
        table, switches = SGLANG_FLAGS, SGLANG_SWITCHES
    else:
        words = ["vllm serve {model} -tp {tensor_parallel}"]
        table, switches = VLLM_FLAGS, VLLM_SWITCHES
    for key, flag in table.items():
        if key in switches:
            if str(defaults.get(key, "")).strip().lower() in _TRUE:
                words.append(flag)
        elif key in defaults or key in ("port", "host"):
            words.append(f"{flag} {{{key}}}")
    return " ".join(words)
