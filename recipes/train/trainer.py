"""``RefereeGRPOTrainer``: TRL's ``GRPOTrainer`` with the loss aggregation chosen by name.

How a rule is applied without copying TRL's ``_compute_loss``: TRL is run with a base loss
type (``dr_grpo``, whose weight is ``1 / (B x max_completion_length x accumulation steps)``,
or ``grpo`` for per-completion-mean rules) and every completion's advantage is multiplied by
``scale = rule weight / base weight``. Every clipped-surrogate policy loss TRL computes is
positively homogeneous in the advantage (``-min(r A s, clip(r) A s) = -s min(r A, clip(r) A)``
for ``s > 0``), and the importance-sampling correction, off-policy and entropy masks multiply
it, so the policy term comes out weighted by the rule. Signs are kept, so the clip-ratio
metrics are TRL's own.

The KL term is added by TRL after the advantages are used, so it is not scaled by them.
When ``beta > 0`` the trainer multiplies ``beta`` by the scale for the call; that is exact
only when the scale is one number per micro-batch (all built-in rules: ``sequence`` runs on
``grpo`` with scale 1). A rule whose scale differs between completions is refused with
``beta > 0``. The KL metric reads the unscaled KL, so it is TRL's too. One metric follows
the base type's convention: with an entropy bonus TRL logs ``policy_loss`` before dividing by
the accumulation steps for ``grpo``/``dr_grpo`` but after for ``dapo``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from trl import GRPOTrainer

from .config import TRL_LOSS_AGGREGATIONS
from .curriculum import STATE_FILE, CurriculumSettings, PassRatePosterior, draw_prompts, read_seed_rows
from .dynamic_sampling import DynamicSampling, classify_groups, group_rows, join_rows, split_groups_problem
from .loss import BUILTIN_AGGREGATIONS, Aggregation, AggregationContext, get_aggregation
from .sweep import SweepSampler
from .tool_calls import ConcurrentToolCalls
from .trl_version import check_trl_version
from .vllm_cpu_server import use_file_sync, without_nccl_on_cpu
from .vllm_cpu_sync import cpu_engine_start, use_cpu_sync

logger = logging.getLogger("referee.recipes.train")


def base_weights(loss_type: str, context: AggregationContext) -> torch.Tensor:
    """The per-token weight TRL 1.16's ``loss_type`` aggregation gives (``dr_grpo`` or ``grpo``).

    Example:
        >>> mask = torch.tensor([[1., 1., 0., 0.], [1., 1., 1., 1.]])
        >>> base_weights("dr_grpo", AggregationContext(mask, 4, 2, torch.tensor(6.))).item()
        0.0625
        >>> base_weights("grpo", AggregationContext(mask, 4, 1, torch.tensor(6.))).flatten().tolist()
        [0.25, 0.125]
    """
    steps = context.accumulation_steps
    if loss_type == "dr_grpo":
        scale = context.batch_size * context.max_completion_length * steps
        return torch.tensor(1.0 / scale, dtype=context.mask.dtype, device=context.mask.device)
    if loss_type == "grpo":
        lengths = context.mask.sum(dim=-1, keepdim=True).clamp(min=1.0)
        return 1.0 / (lengths * context.batch_size * steps)
    raise ValueError(f"No base weights for loss_type {loss_type!r}; use 'dr_grpo' or 'grpo'.")


def advantage_scale(rule: Aggregation, context: AggregationContext, *, check: bool = False) -> torch.Tensor:
    """The factor on each advantage that turns the rule's base aggregation into the rule.

    With ``check=True`` the rule's weights are checked to be finite and positive on loss
    tokens (done for rules that are not built in).

    Example:
        >>> from referee.recipes.train.loss import get_aggregation
        >>> context = AggregationContext(torch.ones(2, 4), 8, 1, torch.tensor(8.))
        >>> advantage_scale(get_aggregation("token"), context).item()
        2.0
        >>> advantage_scale(get_aggregation("sequence"), context).flatten().tolist()
        [1.0, 1.0]
    """
    weights = rule.weights(context)
    if check:
        on_tokens = torch.broadcast_to(weights, context.mask.shape)[context.mask.bool()]
        if not bool(torch.isfinite(on_tokens).all() and (on_tokens > 0).all()):
            raise ValueError(
                f"Loss aggregation {rule.name!r} gave a weight that is not finite and positive on a loss token; "
                "return positive weights (mask tokens out with the completion mask instead)."
            )
    return weights / base_weights(rule.base_loss_type, context)


def kl_scale(rule_name: str, scale: torch.Tensor, mask: torch.Tensor) -> float:
    """The one number ``beta`` must be multiplied by, or ``ValueError`` if the scale differs between loss tokens.

    Example:
        >>> kl_scale("token", torch.tensor(2.0), torch.ones(2, 3))
        2.0
        >>> kl_scale("mine", torch.tensor([[1.0], [3.0]]), torch.ones(2, 3))
        Traceback (most recent call last):
        ...
        ValueError: Loss aggregation 'mine' weighs completions differently, which cannot be exact with the KL term; set beta=0 or register the rule with base_loss_type='grpo' if it is a per-completion mean.
    """
    if scale.dim() == 0:
        return float(scale)
    on_tokens = torch.broadcast_to(scale, mask.shape)[mask.bool()]
    if on_tokens.numel() == 0:
        return 1.0
    if not bool((on_tokens == on_tokens[0]).all()):
        raise ValueError(
            f"Loss aggregation {rule_name!r} weighs completions differently, which cannot be exact with the KL term; "
            "set beta=0 or register the rule with base_loss_type='grpo' if it is a per-completion mean."
        )
    return float(on_tokens[0])


class RefereeGRPOTrainer(ConcurrentToolCalls, GRPOTrainer):
    """``GRPOTrainer`` whose loss aggregation is ``args.loss_aggregation`` (see ``RefereeGRPOConfig``).

    Everything else is TRL's: generation, rewards, advantages, clipping, importance
    sampling, entropy terms and metrics. With ``environment_factory=PythonTool.factory(...)``
    (:mod:`referee.rewards.tools`) each tool turn's cells of all rollouts run at once
    (:mod:`referee.recipes.train.tool_calls`), with TRL's results and order. With ``args.loss_aggregation`` unset (a plain
    ``GRPOConfig``, or a loss type with no matching rule such as ``cispo``) it is exactly
    TRL's trainer. The installed TRL must be the pinned release.

    Example:
        >>> import tempfile
        >>> from datasets import Dataset
        >>> from referee.recipes.train.config import build_grpo_config
        >>> from referee.recipes.common.tiny_model import build_char_tokenizer, build_tiny_model
        >>> tokenizer = build_char_tokenizer()
        >>> args = build_grpo_config(tempfile.mkdtemp(), profile="cpu", loss_aggregation="sequence-sum",
        ...                          per_device_train_batch_size=4, num_generations=4, report_to="none")
        >>> trainer = RefereeGRPOTrainer(
        ...     model=build_tiny_model(tokenizer, hidden_size=32, num_layers=1, intermediate_size=64),
        ...     reward_funcs=lambda completions, **kwargs: [float(len(c)) for c in completions],
        ...     args=args, train_dataset=Dataset.from_dict({"prompt": ["1+1="] * 4}), processing_class=tokenizer)
        >>> trainer.aggregation.name, trainer.loss_type
        ('sequence-sum', 'dr_grpo')
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        check_trl_version()
        with cpu_engine_start(lambda: self.model.dtype), without_nccl_on_cpu():
            super().__init__(*args, **kwargs)
        #: How the vLLM engine gets the trainer's weights: TRL's own sync, the CPU engine's reload
        #: (``cpu-reload``, ``referee.recipes.train.vllm_cpu_sync``) or, for a server, a file it loads
        #: (``cpu-file``, ``referee.recipes.train.vllm_cpu_server``); ``None`` without vLLM.
        self.vllm_sync: str | None = None
        if getattr(self, "use_vllm", False):
            self.vllm_sync = "cpu-reload" if use_cpu_sync(self.vllm_generation) else \
                "cpu-file" if use_file_sync(self.vllm_generation) else "trl"
        self.dynamic_sampling: DynamicSampling | None = None
        self.curriculum: CurriculumSettings | None = None
        self.sweep: SweepSampler | None = None  # the curriculum's sweep sampler, when it is the one chosen
        settings = getattr(self.args, "dynamic_sampling", None)
        if settings is not None:
            self._set_up_dynamic_sampling(DynamicSampling.from_dict(settings))
        curriculum = getattr(self.args, "curriculum", None)
        if curriculum is not None:
            self._set_up_curriculum(CurriculumSettings.from_dict(curriculum))
        name = getattr(self.args, "loss_aggregation", None)
        self.aggregation: Aggregation | None = None if name is None else get_aggregation(name)
        if self.aggregation is None:
            return
        if self.args.loss_type not in TRL_LOSS_AGGREGATIONS:
            raise ValueError(
                f"loss_aggregation={name!r} reweights TRL's clipped-surrogate loss, but loss_type="
                f"{self.args.loss_type!r} is not one; use one of {', '.join(TRL_LOSS_AGGREGATIONS)}."
            )
        # `_compute_loss` reads `self.loss_type`; `args.loss_type` keeps what the user wrote.
        self.loss_type = self.aggregation.base_loss_type
        self._check_rule = self.aggregation.name not in BUILTIN_AGGREGATIONS

    def _aggregation_context(self, inputs: dict[str, Any]) -> AggregationContext:
        mask = inputs["completion_mask"]
        if "tool_mask" in inputs:
            mask = mask * inputs["tool_mask"]
        mask = mask.to(inputs["advantages"].dtype)
        window_tokens = inputs["num_items_in_batch"].clamp(min=1.0) / self.accelerator.num_processes
        steps = 1
        if self.model.training:  # evaluation neither splits nor accumulates the batch
            steps = self.current_gradient_accumulation_steps
            window_tokens = window_tokens * steps / self.args.steps_per_generation
        return AggregationContext(mask, self.max_completion_length, steps, window_tokens)

    @contextmanager
    def _beta_scaled(self, factor: float) -> Iterator[None]:
        beta = self.beta
        self.beta = beta * factor
        try:
            yield
        finally:
            self.beta = beta

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        if self.aggregation is None:
            return super()._compute_loss(model, inputs)
        context = self._aggregation_context(inputs)
        scale = advantage_scale(self.aggregation, context, check=self._check_rule)
        advantages = inputs["advantages"]
        if advantages.dim() == 1:
            advantages = advantages.unsqueeze(1)
        # A new dict: with num_iterations > 1 TRL reuses the buffered inputs.
        scaled_inputs = {**inputs, "advantages": advantages * scale.to(advantages.dtype)}
        if self.beta == 0.0:
            return super()._compute_loss(model, scaled_inputs)
        with self._beta_scaled(kl_scale(self.aggregation.name, scale, context.mask)):
            return super()._compute_loss(model, scaled_inputs)

    # --- dynamic sampling ----------------------------------------------------------------------

    def _set_up_dynamic_sampling(self, settings: DynamicSampling) -> None:
        """Check that the run can drop and refill groups exactly, and find the reward to read."""
        problem = split_groups_problem(self.args.generation_batch_size, self.accelerator.num_processes,
                                       self.num_generations)
        if problem:
            raise ValueError(problem)
        if self.scale_rewards == "batch" or self.multi_objective_aggregation != "sum_then_normalize":
            raise ValueError("dynamic sampling keeps advantages exact only when they are normalised per group; use "
                             "scale_rewards 'group' or 'none' and multi_objective_aggregation 'sum_then_normalize'.")
        if getattr(self, "tools", None) or self._is_vlm:
            raise ValueError("dynamic sampling does not join batches of tool calls or images yet; turn it off for "
                             "this run.")
        self._set_up_signal(settings.reward)
        self.dynamic_sampling = dataclasses.replace(settings, reward=self.reward_func_names[self._signal_index])

    def _set_up_signal(self, chosen: str | None) -> None:
        """The reward dynamic sampling and the curriculum read (default: the first correctness reward)."""
        if getattr(self, "_signal_index", None) is not None:
            return
        names = list(self.reward_func_names)
        if chosen is None:
            kinds = [getattr(function, "kind", None) for function in self.reward_funcs]
            chosen = names[kinds.index("correctness")] if "correctness" in kinds else names[0]
        if chosen not in names:
            raise ValueError(f"dynamic_sampling.reward {chosen!r} is not one of the rewards ({', '.join(names)}).")
        self._signal_index = names.index(chosen)
        low, high = getattr(self.reward_funcs[self._signal_index], "reward_range", (0.0, 1.0))
        self._signal_range = (float(low), float(high))
        self._last_rewards_per_func: torch.Tensor | None = None

    def _set_up_curriculum(self, settings: CurriculumSettings) -> None:
        """A posterior over the training prompts, seeded from a pre-filter or eval result if given."""
        problem = split_groups_problem(self.args.generation_batch_size, self.accelerator.num_processes,
                                       self.num_generations)
        if problem:
            raise ValueError(problem.replace("dynamic sampling", "the curriculum"))
        self._set_up_signal(None)
        self.posterior = PassRatePosterior(len(self.train_dataset), settings.prior)
        if settings.seed_from is not None:
            rows = read_seed_rows(settings.seed_from)
            if len(rows) != len(self.train_dataset):
                raise ValueError(f"curriculum.seed_from {settings.seed_from} has {len(rows)} rows but the training set "
                                 f"has {len(self.train_dataset)}; seed from a prefilter or eval run of the same rows.")
            self.posterior.seed(rows)
        if settings.sampler == "sweep":
            self.sweep = SweepSampler(len(self.train_dataset), retire_after=settings.retire_after,
                                      min_live=self.args.generation_batch_size // self.num_generations)
        self.curriculum = settings

    def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> torch.Tensor:
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._last_rewards_per_func = rewards  # gathered over processes: the same on every rank
        return rewards

    def _draw_inputs(self, round_index: int) -> tuple[list[dict[str, Any]], list[int]]:
        """This process's share of a fresh generation batch, and the dataset index of every
        completion of all processes. Prompts are drawn by the curriculum, or else by a uniform
        permutation, seeded with the seed, the step and the round: every process draws the same
        prompts, and a resumed run draws what it would have drawn."""
        groups = self.args.generation_batch_size // self.num_generations
        # A tuple of ints hashes alike in every process and run (only str and bytes hashes are salted).
        seed = hash((self.args.seed, self.state.global_step, round_index)) % 2**63
        if self.sweep is not None:
            picks = self.sweep.draw(self.posterior, groups, seed)
        elif self.curriculum is not None:
            picks = draw_prompts(self.posterior, self.curriculum, groups, seed)
        else:
            order = torch.randperm(len(self.train_dataset), generator=torch.Generator().manual_seed(seed)).tolist()
            picks = [order[i % len(order)] for i in range(groups)]
        indices = [index for index in picks for _ in range(self.num_generations)]
        local = len(indices) // self.accelerator.num_processes
        start = self.accelerator.process_index * local
        return [self.train_dataset[index] for index in indices[start:start + local]], indices

    def _learn_pass_rates(self, indices: list[int]) -> None:
        """Update the curriculum's posterior with the signal reward of the round just scored."""
        values = self._last_rewards_per_func[:, self._signal_index].tolist()
        high = self._signal_range[1]
        passed = [None if value != value else value >= high for value in values]
        self.posterior.update(indices, passed)
        if self.sweep is not None:
            self.sweep.record(indices, passed, group_size=self.num_generations, step=self.state.global_step)

    def _log_curriculum(self) -> None:
        means = self.posterior.means()
        metrics = self._metrics["train"]
        metrics["curriculum/mean_p"].append(sum(means) / len(means))
        metrics["curriculum/solved_share"].append(sum(p > self.curriculum.band[1] for p in means) / len(means))
        if self.sweep is not None:
            reasons = [why["reason"] for why in self.sweep.retired.values()]
            metrics["curriculum/sweep"].append(float(self.sweep.sweep))
            metrics["curriculum/retired_solved"].append(float(reasons.count("solved")))
            metrics["curriculum/retired_failed"].append(float(reasons.count("failed")))

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if not self.model.training or (self.dynamic_sampling is None and self.curriculum is None):
            return super()._generate_and_score_completions(inputs)
        indices: list[int] = []
        if self.curriculum is not None:  # the dataloader's prompts give way to the curriculum's
            self.posterior.age(self.state.global_step, self.curriculum.half_life)
            inputs, indices = self._draw_inputs(0)
        if self.dynamic_sampling is None:
            output = super()._generate_and_score_completions(inputs)
            self._learn_pass_rates(indices)
            self._log_curriculum()
            return output
        settings, size = self.dynamic_sampling, self.num_generations
        world, rank = self.accelerator.num_processes, self.accelerator.process_index
        need = len(inputs) // size  # groups this process must hand over
        kept: list[list[tuple[int, int]]] = [[] for _ in range(world)]  # per process: (round, local group)
        spare: list[tuple[int, int]] = []  # this process's constant groups, newest first
        outputs: list[dict[str, Any]] = []
        totals = {"groups": 0, "informative": 0, "all_correct": 0, "all_wrong": 0, "other": 0, "unscored": 0}
        batch = inputs
        for round_index in range(settings.max_rounds):
            outputs.append(super()._generate_and_score_completions(batch))
            if self.curriculum is not None:
                self._learn_pass_rates(indices)
            values = self._last_rewards_per_func[:, self._signal_index]
            kinds = classify_groups(values, size, low=self._signal_range[0], high=self._signal_range[1])
            for key, value in (("groups", kinds.informative.numel()), ("informative", int(kinds.informative.sum())),
                               ("all_correct", kinds.all_correct), ("all_wrong", kinds.all_wrong),
                               ("other", kinds.other_constant), ("unscored", kinds.unscored)):
                totals[key] += value
            per_process = kinds.informative.view(world, -1)
            for process in range(world):
                for group in per_process[process].nonzero().flatten().tolist():
                    if len(kept[process]) < need:
                        kept[process].append((round_index, group))
            spare = [(round_index, g) for g in (~per_process[rank]).nonzero().flatten().tolist()] + spare
            if all(len(groups) >= need for groups in kept):  # every process decides this alike
                break
            batch, indices = self._draw_inputs(round_index + 1)
        mine = kept[rank]
        shortfall = need - len(mine)
        filler: list[tuple[int, int]] = []
        if shortfall and settings.on_shortfall == "repeat" and mine:
            filler = [mine[i % len(mine)] for i in range(shortfall)]
        elif shortfall:
            filler = spare[:shortfall]
        chosen = mine + filler
        parts = []
        for round_index, output in enumerate(outputs):
            rows = group_rows([g for r, g in chosen if r == round_index], size)
            parts.append((output, rows))
        joined = join_rows(parts, self._tokenizer.pad_token_id)
        if shortfall and settings.on_shortfall == "skip":
            masked = torch.zeros(joined["completion_mask"].size(0), 1, dtype=joined["completion_mask"].dtype,
                                 device=joined["completion_mask"].device)
            order = [entry for round_index in range(len(outputs)) for entry in chosen if entry[0] == round_index]
            for position, entry in enumerate(order):
                masked[position * size:(position + 1) * size] = 0 if entry in filler else 1
            joined["completion_mask"] = joined["completion_mask"] * masked
        loss_mask = joined["completion_mask"] if "tool_mask" not in joined else joined["completion_mask"] * joined["tool_mask"]
        joined["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
        self._log_dynamic_sampling(len(outputs), totals, sum(max(0, need - len(groups)) for groups in kept), world * need)
        if self.curriculum is not None:
            self._log_curriculum()
        return joined

    # --- curriculum state: saved with each checkpoint, restored on resume -----------------------

    def train(self, resume_from_checkpoint: str | bool | None = None, *args: Any, **kwargs: Any) -> Any:
        if self.curriculum is not None and resume_from_checkpoint:
            checkpoint = resume_from_checkpoint
            if checkpoint is True:
                from transformers.trainer_utils import get_last_checkpoint

                checkpoint = get_last_checkpoint(self.args.output_dir)
            state = Path(str(checkpoint)) / STATE_FILE
            if not state.is_file():
                raise ValueError(f"{checkpoint} holds no {STATE_FILE}; resume a curriculum run from its own checkpoint.")
            self._load_curriculum_state(json.loads(state.read_text(encoding="utf-8")), checkpoint)
        result = super().train(resume_from_checkpoint, *args, **kwargs)
        if self.curriculum is not None and self.curriculum.state and self.accelerator.is_main_process:
            self._write_curriculum_state(Path(self.curriculum.state))
        return result

    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        super()._save_checkpoint(model, trial)
        if self.curriculum is None or not self.accelerator.is_main_process:
            return
        folder = Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
        self._write_curriculum_state(folder / STATE_FILE)
        if self.curriculum.state:
            self._write_curriculum_state(Path(self.curriculum.state))

    def _curriculum_state(self) -> dict[str, Any]:
        """The posterior's state, with the sweep sampler's under ``sweep`` (its retirements and why)."""
        state = self.posterior.state_dict()
        if self.sweep is not None:
            state["sweep"] = self.sweep.state_dict()
        return state

    def _load_curriculum_state(self, state: dict[str, Any], checkpoint: Any) -> None:
        self.posterior.load_state_dict(state)
        if self.sweep is None:
            return
        if "sweep" not in state:
            raise ValueError(f"{checkpoint}'s {STATE_FILE} holds no sweep state; resume a sweep curriculum from a "
                             "checkpoint of a sweep run.")
        self.sweep.load_state_dict(state["sweep"])

    def _write_curriculum_state(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(json.dumps(self._curriculum_state()), encoding="utf-8")
        os.replace(temporary, path)

    def _log_dynamic_sampling(self, rounds: int, totals: dict[str, int], shortfall: int, wanted: int) -> None:
        metrics = self._metrics["train"]
        metrics["dynamic_sampling/rounds"].append(float(rounds))
        metrics["dynamic_sampling/kept_share"].append(totals["informative"] / max(1, totals["groups"]))
        metrics["dynamic_sampling/generated_completions"].append(float(totals["groups"] * self.num_generations))
        metrics["dynamic_sampling/dropped_all_correct"].append(float(totals["all_correct"]))
        metrics["dynamic_sampling/dropped_all_wrong"].append(float(totals["all_wrong"]))
        metrics["dynamic_sampling/dropped_other"].append(float(totals["other"] + totals["unscored"]))
        metrics["dynamic_sampling/shortfall_share"].append(shortfall / max(1, wanted))
        if shortfall and self.accelerator.is_main_process:
            logger.warning("dynamic sampling: %d of %d groups still constant after %d rounds; filled by %r "
                           "(dynamic_sampling.on_shortfall).", shortfall, wanted, rounds,
                           self.dynamic_sampling.on_shortfall)
