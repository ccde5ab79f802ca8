"""C11 with gcc (``-O2 -lm``)."""

from .base import Language

LANGUAGE = Language(
    name="c", title="C", tags=("c",), source="main.c", tools=("gcc",),
    compile=("{gcc}", "-std=gnu11", "-O2", "-pipe", "-o", "main", "{source}", "-lm"), run=("./main",),
)
