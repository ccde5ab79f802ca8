"""``-m "not slow"`` leaves out the training runs, the torchrun/DDP runs and the demo, and only them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_output(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing collected
    return done.stdout


def test_slow_is_a_registered_marker():
    assert "@pytest.mark.slow: GRPO training runs" in pytest_output("--markers")


def test_not_slow_skips_the_slow_runs_and_keeps_the_quick_tests():
    modules = ["tests/recipes/test_train_end_to_end.py", "tests/recipes/test_demo.py", "tests/recipes/test_teardown.py"]
    quick = pytest_output("--collect-only", "-q", "-m", "not slow", *modules)
    slow = pytest_output("--collect-only", "-q", "-m", "slow", *modules)
    assert "test_train_end_to_end.py" not in quick and "test_two_processes_share_the_data" in slow
    assert "test_demo_writes_a_model_a_curve_and_metrics" in slow and "test_demo_command_takes_its_options" in quick
    assert "test_process_group_is_destroyed_after_a_ddp_model" in slow
    assert "test_without_a_process_group_the_block_just_runs" in quick
