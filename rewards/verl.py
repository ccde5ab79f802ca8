"""Moved to :mod:`referee.rewards.trainers.verl`; this old path works, with a DeprecationWarning, for one release."""

from referee.rewards.trainers.old_paths import forward

forward(globals(), "verl")
