"""Benchmarks: run each as a module from the repository root, `python -m benchmarks.NAME --help`.

Run as modules, not as scripts: a script's own folder comes first on the import path, and
this folder holds benchmarks named like standard modules (`math.py`, `code.py`).
"""
