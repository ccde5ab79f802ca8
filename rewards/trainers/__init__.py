"""referee.rewards.trainers: referee's rewards in trainers other than TRL.

One module per trainer, over one shared core:

* :mod:`referee.rewards.trainers.verl`: ``compute_score`` for verl's ``custom_reward_function``;
* :mod:`referee.rewards.trainers.openrlhf`: OpenRLHF's ``reward_func`` file and ``referee serve``'s requests;
* :mod:`referee.rewards.trainers.slime`: slime's ``--custom-rm-path`` functions;
* :mod:`referee.rewards.trainers.prime_verifiers`: rubric functions for Prime Intellect's ``verifiers``;
* :mod:`referee.rewards.trainers.sandbox_fusion`: Sandbox Fusion's ``/run_code``, as verl calls it;
* the core: :mod:`referee.rewards.trainers.adapters` (the scorer, its options and metrics) and
  :mod:`referee.rewards.trainers.routing` (which verifier a trainer's sample needs, and its gold).

The modules' old paths (``referee.rewards.verl``, ...) import for one release, with a
``DeprecationWarning`` (:mod:`referee.rewards.trainers.old_paths`). This package imports none of
its modules: ``import referee.rewards.trainers.verl`` loads verl's and what it needs, nothing else.
"""
