"""Moved to :mod:`referee.rewards.trainers.openrlhf`; this old path works, with a DeprecationWarning, for one release."""

from referee.rewards.trainers.old_paths import forward

forward(globals(), "openrlhf")
