"""The leading settings run again on more episodes before one is chosen.

A handful of episodes ranks settings coarsely: a setting can lead on them
and fail an initial state they lack (the reacher's smoothest near-best
setting missed the target in an unseen episode). The leaders by return,
and the setting the tolerance rule picks among them, run on the search's
episodes and `confirm_episodes` more of the same seed, still episodes the
closing comparison's check seed never shares; the choice is made again on
all of them.
"""

import dataclasses
import multiprocessing

from . import episodes as episodes_lib

# Leaders by return re-run, besides the setting the tolerance rule picks.
LEADERS = 4


@dataclasses.dataclass
class Confirmed:
    """A trial scored anew; reads like an Optuna trial where the search uses one."""

    number: int
    value: float  # None when the longer run refused the setting
    user_attrs: dict


def leaders(trials, chosen):
    """The LEADERS finished trials of best score, and `chosen` if it is not among them."""
    done = [t for t in trials if t.value is not None and "summary" in t.user_attrs]
    ranked = sorted(done, key=lambda t: -t.value)[:LEADERS]
    if chosen is not None and all(t.number != chosen.number for t in ranked):
        ranked.append(chosen)
    return ranked


def _score(arguments):
    """One leader on all its episodes; a refusal comes back as its reason."""
    model, task, overrides, seeds, steps, budget_ms, max_abs_da, perturbations = arguments
    try:
        result = episodes_lib.run_episodes(model, task, overrides, seeds, steps, budget_ms,
                                           perturbations=perturbations)
        if max_abs_da > 0:
            episodes_lib.check_smoothness(result, max_abs_da)
    except episodes_lib.OverBudget as over:
        return f"over budget ({over})"
    except episodes_lib.TooRough as rough:
        return f"too rough ({rough})"
    return result.summary()


def confirm(settings, trials, chosen, jobs, initializer=None):
    """Re-runs the leaders on settings.episodes + settings.confirm_episodes
    episodes in `jobs` processes; returns them as Confirmed trials."""
    s = settings
    lead = leaders(trials, chosen)
    seeds = episodes_lib.episode_seeds(s.seed, s.episodes + s.confirm_episodes)
    print(f"tune: confirming {len(lead)} leading settings on {len(seeds)} episodes of eval "
          f"--seed {s.seed} (the search's {s.episodes} and {s.confirm_episodes} more)",
          flush=True)
    context = multiprocessing.get_context("spawn")
    with context.Pool(min(jobs, len(lead)), initializer=initializer) as pool:
        outcomes = pool.map(_score, [(s.model, s.task, t.user_attrs["overrides"], seeds,
                                      s.steps, s.budget_ms, s.max_abs_da, s.perturbations())
                                     for t in lead])
    confirmed = []
    for trial, outcome in zip(lead, outcomes):
        attrs = {k: v for k, v in trial.user_attrs.items() if k != "summary"}
        if isinstance(outcome, str):
            attrs["refused"] = outcome
            confirmed.append(Confirmed(trial.number, None, attrs))
            print(f"tune:   trial {trial.number}: {trial.value:.1f} -> {outcome}", flush=True)
            continue
        attrs["summary"] = outcome
        value = outcome[episodes_lib.SCORES[s.score]]
        confirmed.append(Confirmed(trial.number, value, attrs))
        print(f"tune:   trial {trial.number}: {trial.value:.1f} -> {value:.1f} "
              f"(|Δa| {outcome['mean_abs_da']:.3f})", flush=True)
    return confirmed
