"""Shared by the tests/test_cot_dp_*.py files: a task config in one call, the PNG signature."""
from __future__ import annotations

from cot_dp.tasks import TaskConfig, TaskParams

PNG = b"\x89PNG\r\n\x1a\n"


def task(name="arithmetic", size=3, **params):
    return TaskConfig(name=name, size=size, params=TaskParams(**params))
