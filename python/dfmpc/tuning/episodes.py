"""Scores one planner setting: closed-loop episodes on given seeds."""

import dataclasses
import math

import numpy as np

from .. import _dfmpc

# Episode i of seed S runs from the initial state of seed S * 1000003 + i,
# as `dfmpc eval --seed S` and `dfmpc collect --seed S` do.
SEED_STRIDE = 1000003


def episode_seeds(seed, episodes):
    return [seed * SEED_STRIDE + i for i in range(episodes)]


def perturbation(perturb="", randomize=""):
    """make_env's keyword perturbations from the texts of eval's --perturb
    (name=value,...) and --randomize (name=low:high,...): a number is fixed,
    a (low, high) pair drawn per episode from the episode's seed, so every
    setting meets the same draws. The environment checks names and values."""
    kwargs = {}
    for flag, text, parts_allowed in (("perturb", perturb, (1,)), ("randomize", randomize, (1, 2))):
        for entry in filter(None, (e.strip() for e in text.split(","))):
            name, equals, value = (part.strip() for part in entry.partition("="))
            parts = value.split(":")
            if not name or not equals or len(parts) not in parts_allowed:
                form = "name=value" if flag == "perturb" else "name=low:high"
                raise ValueError(f"{flag}: '{entry}' is not {form}")
            if name in kwargs:
                raise ValueError(f"{flag}: perturbation '{name}' is given twice, or both "
                                 "fixed and randomized")
            try:
                numbers = [float(part) for part in parts]
            except ValueError:
                raise ValueError(f"{flag}: '{entry}' has a value that is not a number") from None
            kwargs[name] = numbers[0] if len(numbers) == 1 else tuple(numbers)
    return kwargs


class OverBudget(Exception):
    """The setting's warm steps took longer than the latency budget allows."""

    def __init__(self, p99_ms, budget_ms):
        super().__init__(f"warm-step p99 {p99_ms:.2f} ms > budget {budget_ms:g} ms")
        self.p99_ms = p99_ms


class TooRough(Exception):
    """The setting's executed actions change more per step than allowed."""

    def __init__(self, mean_abs_da, limit):
        super().__init__(f"mean |Δa| {mean_abs_da:.3f} > limit {limit:g}")
        self.mean_abs_da = mean_abs_da


# What a setting's episodes score: the mean return, or the mean of the
# worst quarter of them (at least one; the conditional value at risk), which
# a setting that fails one initial state in ten loses where the mean hides it.
SCORES = {"mean": "return_mean", "worst-quarter": "return_worst_quarter"}


def worst_quarter(returns):
    """The mean of the lowest quarter of `returns` (at least one of them)."""
    ordered = sorted(returns)
    return float(np.mean(ordered[:max(1, math.ceil(len(ordered) / 4))]))


@dataclasses.dataclass
class Episodes:
    """What a setting did over its episodes."""

    returns: list = dataclasses.field(default_factory=list)
    successes: list = dataclasses.field(default_factory=list)  # empty: no success metric
    action_changes: list = dataclasses.field(default_factory=list)  # mean |Δa| per episode
    latencies_ms: list = dataclasses.field(default_factory=list)  # every warm step

    def score(self, kind):
        """The episodes' score of `kind`, a key of SCORES."""
        return self.summary()[SCORES[kind]]

    def summary(self):
        lat = np.asarray(self.latencies_ms) if self.latencies_ms else np.zeros(1)
        return {
            "episodes": len(self.returns),
            "return_mean": float(np.mean(self.returns)),
            "return_std": float(np.std(self.returns)),
            "return_worst_quarter": worst_quarter(self.returns),
            "success": float(np.mean(self.successes)) if self.successes else float("nan"),
            "mean_abs_da": float(np.mean(self.action_changes)),
            "p50_ms": float(np.percentile(lat, 50)),
            "p99_ms": float(np.percentile(lat, 99)),
        }


# A new planner's first model calls are slow (LibTorch's first kernels and
# allocations, tens of ms in a fresh process): warm-up, not latency.
WARMUP_STEPS = 5
# After this many steps a setting twice over budget stops early; a setting
# is judged on all its steps at the end (a few steps' p99 is their maximum).
BUDGET_CHECK_STEPS = 50


def run_episodes(model, task, overrides, seeds, max_steps=0, budget_ms=0.0, on_episode=None,
                 perturbations=None):
    """Runs one episode per seed with a planner of `overrides` (one thread), at
    the model's control rate, as `dfmpc eval` does, in the task perturbed by
    `perturbations` (make_env's keywords; see perturbation()).

    Latencies are the warm steps' after the planner's first WARMUP_STEPS.
    max_steps > 0 cuts each episode to that many control steps. A budget
    > 0 raises OverBudget when the warm steps' p99 exceeds it at the end,
    or twice it after BUDGET_CHECK_STEPS steps. on_episode(done, result)
    is called after each episode and may raise to stop.
    """
    planner = _dfmpc.Planner.from_file(model, task=task, threads=1, **overrides)
    result = Episodes()
    warmup = WARMUP_STEPS
    with _dfmpc.make_env(task, action_repeat=planner.action_repeat,
                         **(perturbations or {})) as env:
        for seed in seeds:
            observation, info = env.reset(seed=seed)
            planner.reset(observation)
            total, changes, previous, steps = 0.0, [], None, 0
            while True:
                action = planner.act(observation)
                warmup -= 1
                if warmup < 0:
                    result.latencies_ms.append(planner.stats.latency_ms)
                if previous is not None:
                    changes.append(float(np.mean(np.abs(action - previous))))
                previous = action
                observation, reward, terminated, truncated, info = env.step(action)
                total += reward
                steps += 1
                if budget_ms > 0 and len(result.latencies_ms) == BUDGET_CHECK_STEPS:
                    _check_budget(result.latencies_ms, budget_ms, slack=2.0)
                if terminated or truncated or steps == max_steps:
                    break
            result.returns.append(total)
            if "is_success" in info:
                result.successes.append(bool(info["is_success"]))
            result.action_changes.append(float(np.mean(changes)) if changes else 0.0)
            if on_episode is not None:
                on_episode(len(result.returns), result)
    if budget_ms > 0 and result.latencies_ms:
        _check_budget(result.latencies_ms, budget_ms)
    return result


def check_smoothness(result, limit, slack=1.0):
    """Raises TooRough when the episodes' mean |Δa| exceeds slack * limit (> 0)."""
    mean_abs_da = float(np.mean(result.action_changes))
    if mean_abs_da > slack * limit:
        raise TooRough(mean_abs_da, limit)


def _check_budget(latencies_ms, budget_ms, slack=1.0):
    p99 = float(np.percentile(latencies_ms, 99))
    if p99 > slack * budget_ms:
        raise OverBudget(p99, budget_ms)


def one_call_ms(model, task, overrides, steps=20):
    """A warm step of one model call at one candidate: the least a step can cost (p50)."""
    cheapest = dict(overrides, candidates=1, calls_per_step=1, front_tokens=0, threads=1)
    planner = _dfmpc.Planner.from_file(model, task=task, **cheapest)
    with _dfmpc.make_env(task, action_repeat=planner.action_repeat) as env:
        observation, _ = env.reset(seed=0)
        planner.reset(observation)
        latencies = []
        for _ in range(steps):
            observation, *_ = env.step(planner.act(observation))
            latencies.append(planner.stats.latency_ms)
    return float(np.percentile(latencies[WARMUP_STEPS:], 50))
