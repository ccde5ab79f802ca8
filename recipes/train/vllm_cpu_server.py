"""``vllm_mode: server`` from a trainer on the CPU: the weights go to the server through a shared folder.

TRL 1.16 pushes weights to a ``trl vllm-serve`` server over vLLM's NCCL weight-transfer engine,
which needs a CUDA device on the trainer's side (``init_communicator`` refuses any other). A
trainer on the CPU instead writes its weights (LoRA merged, TRL's own walk and names) to one
safetensors file and asks the server, through vLLM's ``/collective_rpc`` (dev mode, which
``trl vllm-serve`` turns on), to load it with :class:`ReloadFromFile`, a vLLM worker extension:
the model runner's in-place ``reload_weights``, then the tied head's re-pack
(``referee.recipes.train.vllm_cpu_sync``). The file must be readable by the server, so the server
runs on the trainer's machine; start it with::

    trl vllm-serve --model MODEL --host 127.0.0.1 \\
        --worker-extension-cls referee.recipes.train.vllm_cpu_server.ReloadFromFile
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import torch

from ..errors import RecipeError

#: The ``--worker-extension-cls`` a CPU trainer's server needs.
EXTENSION = "referee.recipes.train.vllm_cpu_server.ReloadFromFile"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class ReloadFromFile:
    """A vLLM worker extension: ``referee_reload(path)`` loads a safetensors file of checkpoint-named
    weights into the running model in place and re-packs its tied layers (vLLM mixes it into its worker).

    Example:
        >>> import os, tempfile
        >>> from types import SimpleNamespace
        >>> from safetensors.torch import save_file
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> save_file({"lm_head.weight": torch.ones(2, 2)}, path)
        >>> worker = type("Worker", (ReloadFromFile,), {})()
        >>> worker.model_runner = SimpleNamespace(model=torch.nn.Linear(2, 2), loaded=[],
        ...     reload_weights=lambda weights_iterator: worker.model_runner.loaded.extend(dict(weights_iterator)))
        >>> worker.referee_reload(path), worker.model_runner.loaded
        (1, ['lm_head.weight'])
    """

    def referee_reload(self, path: str) -> int:
        from safetensors.torch import load_file

        from .vllm_cpu_sync import repack_tied_layers

        weights = load_file(path)
        self.model_runner.reload_weights(weights_iterator=iter(weights.items()))
        repack_tied_layers(self.model_runner.model)
        return len(weights)


@contextmanager
def without_nccl_on_cpu() -> Iterator[None]:
    """While the block runs (a trainer's ``__init__``), TRL's client skips the NCCL weight-transfer group
    for a trainer on the CPU (it would refuse the device); :func:`use_file_sync` then gives the client
    its way to sync. A trainer on a GPU keeps TRL's group.

    Example:
        >>> from trl.generation.vllm_client import VLLMClient
        >>> with without_nccl_on_cpu():
        ...     VLLMClient.init_communicator(None, device="cpu")
    """
    from trl.generation.vllm_client import VLLMClient

    start = VLLMClient.init_communicator

    def start_off_cpu(client: Any, device: Any = 0) -> None:
        if isinstance(device, (str, torch.device)) and torch.device(device).type == "cpu":
            return
        start(client, device)

    VLLMClient.init_communicator = start_off_cpu
    try:
        yield
    finally:
        VLLMClient.init_communicator = start


def sync_through_file(generation: Any, path: Path) -> None:
    """TRL's ``sync_weights`` for server mode from a CPU trainer: every process takes part in TRL's walk
    of the weights; the main one writes them to ``path`` and has the server load them, then drop its
    prefix cache.

    Example:
        >>> import tempfile
        >>> from types import SimpleNamespace
        >>> calls = []
        >>> client = SimpleNamespace(base_url="http://127.0.0.1:1", reset_prefix_cache=lambda: calls.append("reset"),
        ...     _post=lambda url, json: calls.append((url.rsplit("/", 1)[1], json["method"])) or {"results": [1]})
        >>> generation = SimpleNamespace(accelerator=SimpleNamespace(is_main_process=True), vllm_client=client,
        ...     _iter_named_params=lambda: iter([("lm_head.weight", torch.ones(2, 2))]))
        >>> sync_through_file(generation, Path(tempfile.mkdtemp()) / "weights.safetensors"); calls
        [('collective_rpc', 'referee_reload'), 'reset']
    """
    from safetensors.torch import save_file

    weights = {name: tensor.detach().to("cpu", copy=True).contiguous() for name, tensor in generation._iter_named_params()}
    if not generation.accelerator.is_main_process:
        return
    temporary = path.with_name(f".{path.name}.tmp")
    save_file(weights, str(temporary))
    temporary.replace(path)
    client = generation.vllm_client
    try:
        client._post(f"{client.base_url}/collective_rpc",
                     json={"method": "referee_reload", "args": [str(path)], "timeout": 600})
    except Exception as exc:  # the server's answer names what it lacks
        raise RecipeError(f"the vLLM server at {client.base_url} could not load the trainer's weights ({exc}); start it "
                          f"on this machine with --worker-extension-cls {EXTENSION}.") from exc
    client.reset_prefix_cache()


def use_file_sync(generation: Any) -> bool:
    """Make ``generation`` (TRL's ``VLLMGeneration`` in server mode, trainer on the CPU) sync through a
    file in a folder of its own; returns whether it does. A server that is not on loopback is refused:
    it could not read the file.

    Example:
        >>> from types import SimpleNamespace
        >>> use_file_sync(SimpleNamespace(mode="colocate"))
        False
    """
    if generation.mode != "server" or generation.accelerator.device.type != "cpu":
        return False
    client = getattr(generation, "vllm_client", None)
    if client is not None and urlparse(client.base_url).hostname not in LOOPBACK:
        raise RecipeError(f"vllm_mode 'server' from a trainer on the CPU hands the weights over in a file, so the "
                          f"server must run on this machine; {client.base_url} is not loopback (use 127.0.0.1).")
    folder = Path(tempfile.mkdtemp(prefix="referee-vllm-weights-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    generation.sync_weights = lambda: sync_through_file(generation, folder / "weights.safetensors")
    return True
