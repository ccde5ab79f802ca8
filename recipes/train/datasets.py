"""Dataset loaders for the recipes: each maps a dataset's columns to ``prompt`` plus its gold.

The prompt is conversational: a system message that asks for the format the recipe's rewards
check, then the problem as the user message. The gold keeps the column name the referee
reward reads (``answer`` for ``gsm8k_accuracy``, ``answer``/``solution`` for
``math_accuracy``, ``tests`` for ``code_pass_rate``). Rows are read with the pre-filter's
reader: JSONL (``.gz`` too), Parquet, JSON, a ``datasets`` folder or a hub name.

==========  =====================================================  ===================
format      columns read                                           gold columns
==========  =====================================================  ===================
gsm8k       ``question``, ``answer`` (solution ending ``#### N``)  ``answer``
math        ``problem``, ``answer`` and/or ``solution``            the same
code        MBPP (``text``, ``test_list``, ``test_setup_code``),   ``tests`` (a dict
            HumanEval (``prompt``, ``test``, ``entry_point``) or   for the code
            ``prompt`` + ``tests`` already in the verifier's form  verifier)
==========  =====================================================  ===================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import RecipeError

if TYPE_CHECKING:
    from datasets import Dataset

# (user message, gold columns) of one row.
RowMapper = Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]


def _column(row: dict[str, Any], name: str, format_name: str) -> Any:
    value = row.get(name)
    if value is None:
        present = ", ".join(sorted(row)) or "none"
        raise RecipeError(f"The {format_name} loader needs the {name!r} column (this dataset has: {present}); "
                         f"pick the right dataset_format or rename the column.")
    return value


def gsm8k_row(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """GSM8K: ``question`` is the problem, ``answer`` (a solution ending in ``#### N``) the gold.

    Example:
        >>> gsm8k_row({"question": "2 + 3?", "answer": "2 + 3 = 5\\n#### 5"})
        ('2 + 3?', {'answer': '2 + 3 = 5\\n#### 5'})
    """
    return str(_column(row, "question", "gsm8k")), {"answer": _column(row, "answer", "gsm8k")}


def math_row(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """MATH: ``problem``; the gold is ``answer`` and/or ``solution`` (the reward reads ``answer`` first).

    Example:
        >>> math_row({"problem": "What is $1/2 + 1/2$?", "solution": "It is $\\\\boxed{1}$.", "level": 1})
        ('What is $1/2 + 1/2$?', {'solution': 'It is $\\\\boxed{1}$.'})
    """
    golds = {name: row[name] for name in ("answer", "solution") if row.get(name) is not None}
    if not golds:
        _column(row, "answer", "math")
    return str(_column(row, "problem", "math")), golds


def code_row(row: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """MBPP, HumanEval, or ``prompt`` + ``tests``: the task and a ``tests`` dict for the code verifier.

    MBPP shows the first assert so the model knows the function's name and signature.

    Example:
        >>> text, gold = code_row({"text": "Add two numbers.", "test_setup_code": "",
        ...                        "test_list": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]})
        >>> print(text)
        Add two numbers.
        Your code should pass this test:
        assert add(1, 2) == 3
        >>> gold["tests"]["format"], len(gold["tests"]["asserts"])
        ('asserts', 2)
        >>> code_row({"prompt": "def f(x):\\n", "test": "def check(c): ...", "entry_point": "f"})[1]["tests"]["format"]
        'humaneval'
    """
    if "test_list" in row:
        asserts = list(_column(row, "test_list", "code (MBPP)"))
        text = f"{_column(row, 'text', 'code (MBPP)')}\nYour code should pass this test:\n{asserts[0]}"
        return text, {"tests": {"format": "asserts", "asserts": asserts, "setup": row.get("test_setup_code") or ""}}
    if "entry_point" in row:
        prompt = str(_column(row, "prompt", "code (HumanEval)"))
        text = f"Complete this Python function:\n```python\n{prompt}```"
        tests = {"format": "humaneval", "test": _column(row, "test", "code (HumanEval)"),
                 "entry_point": row["entry_point"], "prompt": prompt}
        return text, {"tests": tests}
    return str(_column(row, "prompt", "code")), {"tests": _column(row, "tests", "code")}


@dataclass(frozen=True)
class DatasetFormat:
    """A loader: the system prompt asking for the checked format, and the row mapper.

    Example:
        >>> DATASET_FORMATS["gsm8k"].system_prompt.endswith("'#### 42'.")
        True
    """

    name: str
    system_prompt: str
    map_row: RowMapper


DATASET_FORMATS: dict[str, DatasetFormat] = {
    fmt.name: fmt
    for fmt in (
        DatasetFormat(
            "gsm8k",
            "Solve the math word problem. Think step by step, then give the final answer alone on the last "
            "line as '#### N', where N is just the number, for example '#### 42'.",
            gsm8k_row,
        ),
        DatasetFormat(
            "math",
            "Solve the problem. Think step by step, then give the final answer in \\boxed{}, "
            "for example \\boxed{\\frac{1}{2}}.",
            math_row,
        ),
        DatasetFormat(
            "code",
            "Write a correct, self-contained Python solution. Reply with the complete code in a single "
            "```python fenced block.",
            code_row,
        ),
    )
}


def to_training_row(row: dict[str, Any], dataset_format: str, system_prompt: str | None = None, *,
                    keep: Sequence[str] = ()) -> dict[str, Any]:
    """One dataset row as TRL wants it: a conversational ``prompt``, the gold columns, and the
    ``keep`` columns the row has (the ones the rewards read; the loader's own columns win).

    Example:
        >>> row = to_training_row({"question": "2 + 3?", "answer": "#### 5", "level": 1}, "gsm8k",
        ...                       system_prompt="Be brief.", keep=["level"])
        >>> row["prompt"], row["answer"], row["level"]
        ([{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': '2 + 3?'}], '#### 5', 1)
    """
    fmt = get_dataset_format(dataset_format)
    text, golds = fmt.map_row(row)
    system = fmt.system_prompt if system_prompt is None else system_prompt
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]
    kept = {name: row[name] for name in keep if name in row}
    return {**kept, "prompt": messages, **golds}


def map_columns(row: dict[str, Any], columns: Mapping[str, str]) -> dict[str, Any]:
    """The row with each ``columns`` entry (``name: source``) added as a copy of column ``source``.

    Example:
        >>> map_columns({"question": "2 + 3?", "final": "5"}, {"target": "final"})
        {'question': '2 + 3?', 'final': '5', 'target': '5'}
        >>> map_columns({"question": "2 + 3?"}, {"target": "final"})
        Traceback (most recent call last):
        ...
        referee.recipes.errors.RecipeError: columns maps target from 'final', which this row lacks (it has: question); fix the recipe's columns: entry.
    """
    absent = [source for source in columns.values() if source not in row]
    if absent:
        name = next(name for name, source in columns.items() if source == absent[0])
        raise RecipeError(f"columns maps {name} from {absent[0]!r}, which this row lacks (it has: "
                          f"{', '.join(sorted(row)) or 'none'}); fix the recipe's columns: entry.")
    return {**row, **{name: row[source] for name, source in columns.items()}}


def get_dataset_format(name: str) -> DatasetFormat:
    """The loader called ``name``.

    Example:
        >>> get_dataset_format("code").name
        'code'
    """
    try:
        return DATASET_FORMATS[name]
    except KeyError:
        raise RecipeError(f"Unknown dataset_format {name!r}; choose one of {', '.join(DATASET_FORMATS)}.") from None


def load_training_dataset(
    source: str,
    dataset_format: str,
    *,
    split: str = "train",
    config_name: str | None = None,
    system_prompt: str | None = None,
    max_rows: int | None = None,
    columns: Mapping[str, str] | None = None,
    keep: Sequence[str] = (),
) -> Dataset:
    """The rows of ``source`` (file, folder or hub name) mapped by ``dataset_format``, as a ``datasets.Dataset``.

    ``columns`` (``name: source``) copies column ``source`` of every row to ``name`` before the
    loader reads it; ``keep`` names the columns (mapped or not) kept beside the loader's own, the
    ones the rewards read. A row that cannot be read or mapped stops the load with its position
    and the reason.

    Example:
        >>> import json, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "gsm8k.jsonl")
        >>> with open(path, "w") as f:
        ...     _ = f.write(json.dumps({"question": "2 + 3?", "answer": "2 + 3 = 5\\n#### 5"}) + "\\n")
        >>> dataset = load_training_dataset(path, "gsm8k")
        >>> dataset.column_names, dataset[0]["prompt"][1]["content"]
        (['prompt', 'answer'], '2 + 3?')
    """
    from datasets import Dataset

    from ..common.data import BadRow, load_rows

    get_dataset_format(dataset_format)
    rows = load_rows(source, split=split, config_name=config_name)
    count = len(rows) if max_rows is None else min(len(rows), max_rows)
    mapped = []
    for position, row in enumerate(rows.slice(0, count)):
        if isinstance(row, BadRow):
            raise RecipeError(f"{source}: row {position + 1} cannot be read ({row.reason}); fix or remove it.")
        try:
            mapped.append(to_training_row(map_columns(row, columns or {}), dataset_format, system_prompt, keep=keep))
        except ValueError as exc:
            raise RecipeError(f"{source}: row {position + 1}: {exc}") from None
    if not mapped:
        raise RecipeError(f"{source} has no rows to train on; check the path and split.")
    return Dataset.from_list(mapped)
