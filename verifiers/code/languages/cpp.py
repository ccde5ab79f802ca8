"""C++17 with g++ (``-O2``; ``bits/stdc++.h`` comes with it), as Codeforces and CodeContests judge it."""

from .base import Language

LANGUAGE = Language(
    name="cpp", title="C++", tags=("cpp", "c++", "cc", "cxx", "cplusplus"), source="main.cpp", tools=("g++",),
    compile=("{g++}", "-std=c++17", "-O2", "-pipe", "-o", "main", "{source}"), run=("./main",),
    memory_markers=("std::bad_alloc",),
)
