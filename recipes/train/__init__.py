"""GRPO training: the config, the trainer and its loss layer, YAML recipes, datasets and teardown.

``config`` builds a TRL ``GRPOConfig`` with referee's fields; ``trainer`` is
``RefereeGRPOTrainer``; ``loss`` holds the loss aggregations; ``recipe`` parses a YAML recipe and
runs it; ``datasets`` loads and formats its training data; ``shipped`` lists the recipes in
``referee/recipes/configs``; ``teardown`` holds the process group until the trainer is freed;
``trl_version`` checks the pinned TRL. Importing this package imports none of them.
"""
