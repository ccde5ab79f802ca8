"""Go: ``go build`` of one file (its build cache in the job's folder)."""

from .base import Language

LANGUAGE = Language(
    name="go", title="Go", tags=("go", "golang"), source="main.go", tools=("go",),
    compile=("{go}", "build", "-o", "main", "{source}"), run=("./main",), processes=64, version_args=("version",),
    extra_memory_mb=512,  # the Go runtime reserves address space for its heap arenas beyond what it uses
    memory_markers=("runtime: out of memory",),
)
