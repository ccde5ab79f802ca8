"""The rewards a user meets are documented where the other rewards are: every reward a shipped recipe
names (as ``referee train --list`` shows it), and how a recipe names a reward of your own."""

import re
import sys
from pathlib import Path

import yaml

from referee.recipes.train.shipped import shipped_recipes, summarize_recipe
from referee.rewards.registry import resolve_reward

ROOT = Path(__file__).resolve().parents[2]
REWARDS_DOC = ROOT / "docs" / "rewards.md"


def test_every_reward_a_shipped_recipe_lists_is_documented_with_the_others():
    documented = set(re.findall(r"`([a-z0-9_]+)`", REWARDS_DOC.read_text(encoding="utf-8")))
    listed = {re.sub(r" \([0-9.]+\)$", "", reward) for path in shipped_recipes()
              for reward in summarize_recipe(path).rewards.split(", ")}
    assert listed - documented == set()  # boxed_format was listed by train --list and written nowhere


def test_the_documented_recipe_names_the_examples_own_rewards_by_module_and_attribute(monkeypatch):
    blocks = re.findall(r"```yaml\n(.*?)```", REWARDS_DOC.read_text(encoding="utf-8"), re.DOTALL)
    recipes = [yaml.safe_load(block) for block in blocks]
    names = [name for recipe in recipes if isinstance(recipe, dict) for name in recipe.get("reward_funcs", [])]
    assert any(":" in name for name in names)
    monkeypatch.chdir(ROOT / "examples")  # where the example's my_rewards.py lives, as the text says
    monkeypatch.setattr(sys, "path", list(sys.path))  # the folder resolve_reward adds is dropped afterwards
    assert [resolve_reward(name).__name__ for name in names] == [name.partition(":")[2] for name in names]
