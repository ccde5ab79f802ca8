"""`holding_process_group`: a distributed run that ends normally leaves the group destroyed, never a hang or an abort;
one whose block raised keeps the group (the other ranks may be gone) and the exception propagates."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from referee.recipes.train.teardown import holding_process_group

# One Gloo rank with a DDP model that has trained a step and gathered, as a trainer leaves it.
SCRIPT = textwrap.dedent("""
    import os, sys, tempfile
    import torch, torch.distributed as dist
    from referee.recipes.train.teardown import holding_process_group

    dist.init_process_group("gloo", init_method="file://" + os.path.join(tempfile.mkdtemp(), "store"),
                            rank=0, world_size=1)
    def trained_model():
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
        model(torch.ones(3, 4)).sum().backward()
        dist.all_gather_object([None], {"reward": 1.0})
        return model

    if sys.argv[1] == "destroys":
        with holding_process_group():
            model = trained_model()
            dist.destroy_process_group()
            del model
        print("already destroyed: ok")
        sys.exit(0)
    if sys.argv[1] == "raises":
        try:
            with holding_process_group():
                model = trained_model()
                raise KeyError("a rank failed")
        except KeyError:
            print("raised; group kept:", dist.is_initialized(), flush=True)
        # The kept group and the live model are what interpreter exit then meets: that exit may
        # abort (see the teardown module), and it is not the block's to make clean.
        os._exit(0)
    if sys.argv[1] == "made_inside":  # a launcher's group made when the trainer is built inside the block
        dist.destroy_process_group()
        with holding_process_group():
            dist.init_process_group("gloo", init_method="file://" + os.path.join(tempfile.mkdtemp(), "store"),
                                    rank=0, world_size=1)
            model = trained_model()
            del model
    else:
        with holding_process_group():
            model = trained_model()
            del model
    print("group destroyed:", not dist.is_initialized())
""")


@pytest.mark.parametrize("case, expected", [("normal", "group destroyed: True"),
                                            ("made_inside", "group destroyed: True"),
                                            ("raises", "raised; group kept: True"), ("destroys", "already destroyed: ok")])
@pytest.mark.slow
def test_process_group_is_destroyed_after_a_ddp_model_unless_the_block_raises(tmp_path, case, expected):
    script = tmp_path / "rank.py"
    script.write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(script), case], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == expected


def test_without_a_process_group_the_block_just_runs():
    ran = []
    with holding_process_group():
        ran.append(True)
    assert ran == [True]


# A colocated vLLM engine's groups live inside the default group; its shutdown destroys them again at exit.
VLLM_SCRIPT = textwrap.dedent("""
    import os, sys, tempfile, types
    import torch.distributed as dist
    from referee.recipes.train.teardown import holding_process_group

    calls = []
    state = types.ModuleType("vllm.distributed.parallel_state")  # stands in for vLLM's own
    state.destroy_model_parallel = lambda: calls.append("model_parallel")
    def destroy_distributed_environment():
        calls.append("environment")
        dist.destroy_process_group()  # vLLM's world group holds the default group
    state.destroy_distributed_environment = destroy_distributed_environment
    sys.modules["vllm.distributed.parallel_state"] = state

    dist.init_process_group("gloo", init_method="file://" + os.path.join(tempfile.mkdtemp(), "store"),
                            rank=0, world_size=1)
    with holding_process_group():
        pass
    print(calls, dist.is_initialized())
""")


@pytest.mark.slow
def test_a_colocated_vllm_engines_groups_go_through_vllm_first():
    done = subprocess.run([sys.executable, "-c", VLLM_SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['model_parallel', 'environment'] False"
