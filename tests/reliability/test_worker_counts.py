"""Default worker counts share the node: each of LOCAL_WORLD_SIZE training processes takes its
share of the cores (at least one), for every pool (maths, code judges and their sandboxes)."""

import os

import pytest

from referee.verifiers import deadline_pool
from referee.verifiers.code import grading


@pytest.fixture()
def sixteen_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)


@pytest.mark.parametrize("local_world_size, expected", [(None, 16), ("1", 16), ("8", 2), ("3", 5), ("16", 1),
                                                        ("64", 1), ("0", 16), ("not a number", 16)])
def test_default_workers_divide_the_cores_by_the_local_world_size(sixteen_cores, monkeypatch, local_world_size,
                                                                  expected):
    if local_world_size is not None:
        monkeypatch.setenv("LOCAL_WORLD_SIZE", local_world_size)
    assert deadline_pool.default_workers() == expected


def test_pools_and_the_code_judges_use_the_shared_default(sixteen_cores, monkeypatch):
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")
    pool = deadline_pool.DeadlinePool()
    try:
        assert pool.size == 2
    finally:
        pool.close()
    judges = grading.judge_pool()  # created, not started: no worker runs until a batch comes
    try:
        assert judges.size == 2
    finally:
        judges.close()
