"""How a bad build of the engine fails once started, by its image's `defect` (sim/scenario.py).

Each is a failure users met after moving to a new engine image, with the log it leaves:
- `weights`: loading the checkpoint stops with safetensors' own error and the engine exits
  (vllm-project/vllm#15445, gpustack/gpustack#815: `Error while deserializing header:
  MetadataIncompleteBuffer`);
- `stall`: start-up stops after NCCL's init lines and never reaches the API server, nor exits
  (vllm-project/vllm#8447, two nodes hanging after `Init START`; vllm-project/vllm#5484);
- `gibberish`: it starts and answers, every token an exclamation mark (vllm-project/vllm#13035;
  vllm-project/vllm#9769, nonsense after an upgrade): /health and /v1/models look well.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from . import procs
from .serve_spec import ServeSpec, log

if TYPE_CHECKING:
    from .container import Container

WEIGHTS_TRACE = """\
ERROR [engine.py:448] Traceback (most recent call last):
ERROR [engine.py:448]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/default_loader.py", line 269, in load_weights
ERROR [engine.py:448]     loaded_weights = model.load_weights(self.get_all_weights(model_config, model))
ERROR [engine.py:448]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/weight_utils.py", line 518, in safetensors_weights_iterator
ERROR [engine.py:448]     with safe_open(st_file, framework="pt") as f:
ERROR [engine.py:448] safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer
"""  # noqa: E501


def fail_or_stall(spec: ServeSpec, ctr: Container) -> int | None:
    """The exit status a defective build ends with (after a stall: when its container stops);
    None when the build has no start-up defect and the engine goes on."""
    defect = ctr.image().get("defect")
    if defect == "weights":
        log(ctr, "INFO", "default_loader.py:262", f"Loading weights for {spec.model}")
        sys.stderr.write(WEIGHTS_TRACE)
        sys.stderr.flush()
        return 1
    if defect == "stall":
        log(ctr, "INFO", "pynccl.py:70", "vLLM is using nccl==2.28.9")
        print(f"{ctr.name}:52000:52000 [0] NCCL INFO comm 0x1476dca0 rank 0 nranks {spec.world} "
              "cudaDev 0 nvmlDev 0 busId f01000 - Init START", flush=True)  # fmt: skip
        procs.wait_while_running(ctr.host_dir, ctr.id)
        return 0
    return None


def generation_defects(ctr: Container) -> dict[str, bool]:
    """What the serve record's `generation` adds for a build that starts but answers wrong."""
    return {"gibberish": True} if ctr.image().get("defect") == "gibberish" else {}
