import pytest

from referee.rewards import RewardSum, compose_rewards, get_reward, parse_reward_sum
from referee.rewards.compose import swings


def test_pairs_names_and_mappings_become_trl_arguments():
    funcs, weights = compose_rewards([
        ("gsm8k_accuracy", 1.0),
        {"name": "gsm8k_format", "weight": 0.25},
        {"name": "soft_overlong", "weight": 0.5, "options": {"max_length": 64}},
        (get_reward("think_format"), 0.0),  # weight 0: logged, never paid
    ])
    assert [f.__name__ for f in funcs] == ["gsm8k_accuracy", "gsm8k_format", "soft_overlong", "think_format"]
    assert weights == [1.0, 0.25, 0.5, 0.0]
    assert funcs[2].max_length == 64


def test_a_format_weight_that_can_outweigh_correctness_is_refused():
    with pytest.raises(ValueError, match=r"think_format.*move the reward by 1 .*gsm8k_accuracy.*only by 1"):
        compose_rewards([("gsm8k_accuracy", 1.0), ("think_format", 1.0)])
    with pytest.raises(ValueError, match="by 1.2"):  # several small format rewards add up
        compose_rewards([("gsm8k_accuracy", 1.0), ("think_format", 0.4), ("tag_count", 0.4), ("gsm8k_format", 0.4)])
    with pytest.raises(ValueError, match="soft_overlong"):  # a length penalty counts too: it can sink a right answer
        compose_rewards([("gsm8k_accuracy", 1.0), {"name": "soft_overlong", "options": {"max_length": 64}}])
    with pytest.raises(ValueError, match="paid for form alone"):
        compose_rewards([("think_format", 1.0), ("gsm8k_accuracy", 0.0)])


def test_outweighing_is_allowed_only_loudly():
    with pytest.warns(UserWarning, match="allow_shaping_outweigh=True"):
        funcs, weights = compose_rewards([("gsm8k_accuracy", 1.0), ("think_format", 2.0)], allow_shaping_outweigh=True)
    assert weights == [1.0, 2.0]


def test_balanced_mixes_pass():
    compose_rewards([("gsm8k_accuracy", 2.0), ("think_format", 0.5), ("tag_count", 0.5), ("gsm8k_format", 0.5)])
    compose_rewards([("code_format", 0.2), ("gsm8k_accuracy", 1.0)])
    compose_rewards([("gsm8k_accuracy", -1.0), ("think_format", 0.5)])  # |weight| counts


def test_user_rewards_say_their_kind_or_are_counted_as_correctness():
    def length_bonus(completions, **kwargs):
        return [min(len(c) / 100, 1.0) for c in completions]

    with pytest.warns(UserWarning, match="length_bonus does not say what it checks"):
        compose_rewards([(length_bonus, 1.0), ("think_format", 0.5)])
    length_bonus.kind = "shaping"
    with pytest.raises(ValueError, match="length_bonus"):
        compose_rewards([("gsm8k_accuracy", 1.0), (length_bonus, 1.0)])
    length_bonus.kind = "style"
    with pytest.raises(ValueError, match="kind 'style'"):
        compose_rewards([("gsm8k_accuracy", 1.0), (length_bonus, 0.1)])


@pytest.mark.parametrize(("terms", "message"), [
    ([], "No rewards"),
    ([("gsm8k_accuracy", 1.0), ("gsm8k_accuracy", 0.5)], "more than once"),
    ([("gsm8k_accuracy", "1")], "weight '1'"),
    ([("gsm8k_accuracy", float("nan"))], "finite"),
    ([("gsm8k_accuracy", 1.0, "x")], r"\(reward, weight\)"),
    ([{"reward": "gsm8k_accuracy"}], "needs 'name'"),
    ([(42, 1.0)], "not a reward function"),
    (["no_such_reward"], "Unknown reward"),
    (["no.such.module:reward"], "Cannot load reward"),
])
def test_bad_entries_are_named(terms, message):
    with pytest.raises(ValueError, match=message):
        compose_rewards(terms)


def test_swings_by_kind():
    terms = [(get_reward("gsm8k_accuracy"), 2.0), (get_reward("soft_overlong", max_length=8), 0.5)]
    assert swings(terms) == {"correctness": 2.0, "shaping": 0.5}


def test_reward_sum_adds_like_trl_and_keeps_none_out():
    total = parse_reward_sum("gsm8k_accuracy + 0.5*gsm8k_format")
    assert isinstance(total, RewardSum)
    assert total(completions=["#### 18", "#### 17", "The answer is 18", "#### 18"],
                 answer=["18", "18", "18", "bad gold"]) == [1.5, 0.5, 1.0, 0.5]
    only_errors = RewardSum([(get_reward("gsm8k_accuracy"), 1.0)])
    assert only_errors(completions=["#### 18"], answer=["bad gold"]) == [None]


def test_reward_expressions():
    assert parse_reward_sum("gsm8k_format").__name__ == "gsm8k_format"
    assert parse_reward_sum(" 2*gsm8k_accuracy + -0.5*think_format ").__name__ == "2*gsm8k_accuracy + -0.5*think_format"
    assert parse_reward_sum("referee.rewards:SoftOverlong", max_length=8).max_length == 8
    for bad, message in [("gsm8k_accuracy +", "empty term"), ("x*gsm8k_accuracy + tag_count", r"weight\*reward")]:
        with pytest.raises(ValueError, match=message):
            parse_reward_sum(bad)


def test_options_are_scoped_to_a_term_of_a_sum():
    total = parse_reward_sum("gsm8k_accuracy + 0.5*think_format",
                             **{"gsm8k_accuracy.mode": "strict", "think_format.prefilled": True})
    assert [reward.options for reward, _ in total.terms] == [{"mode": "strict"}, {"prefilled": True}]
    assert parse_reward_sum("gsm8k_accuracy", **{"gsm8k_accuracy.mode": "strict"}).options == {"mode": "strict"}
    assert parse_reward_sum("2*gsm8k_accuracy", mode="strict").terms[0][0].options == {"mode": "strict"}
    with pytest.raises(ValueError, match="write it as reward.option, e.g. gsm8k_accuracy.mode"):
        parse_reward_sum("gsm8k_accuracy + tag_count", mode="strict")
    with pytest.raises(ValueError, match="does not name a reward"):
        parse_reward_sum("gsm8k_accuracy + tag_count", **{"think_format.prefilled": True})


def test_a_reward_without_a_kind_is_warned_about_once():
    import warnings

    def length_bonus(completions, **kwargs):
        return [0.0 for _ in completions]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compose_rewards([(length_bonus, 1.0), ("think_format", 0.5)])
    assert [str(w.message).split(" ")[1] for w in caught] == ["length_bonus"]
