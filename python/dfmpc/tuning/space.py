"""What `dfmpc tune` varies: planner options and the ranges they are drawn from."""

import dataclasses
import math

from .. import _dfmpc


@dataclasses.dataclass(frozen=True)
class Dimension:
    """One searched option: a range (integer or real, maybe log-scaled) or choices."""

    key: str
    low: float = 0.0
    high: float = 0.0
    integer: bool = False
    log: bool = False
    choices: tuple = ()

    def sample(self, trial):
        if self.choices:
            return trial.suggest_categorical(self.key, list(self.choices))
        if self.integer:
            return trial.suggest_int(self.key, int(self.low), int(self.high), log=self.log)
        return trial.suggest_float(self.key, self.low, self.high, log=self.log)

    def contains(self, value):
        if self.choices:
            return value in self.choices
        return self.low <= value <= self.high

    def __str__(self):
        if self.choices:
            return f"{self.key} in {{{', '.join(str(c) for c in self.choices)}}}"
        scale = ", log" if self.log else ""
        return f"{self.key} in [{self.low:g}, {self.high:g}]{scale}"


def option_defaults():
    """Every planner option's library default, by key."""
    return {row["key"]: row["default"] for row in _dfmpc.option_table()}


def task_keys():
    """The options a task file's [planner] table may set (the ones a tuner may)."""
    return [row["key"] for row in _dfmpc.option_table() if row["per_task"]]


def default_space(model_info, with_value_model=False):
    """The dimensions searched unless --space or --keys say otherwise.

    Cost guidance and DDIM noise (guidance_scale, eta) cost a gradient or
    more candidates per call and stay off unless named; the mode stays warm.
    """
    window = model_info["train_window"]
    horizons = tuple(h for h in (16, 24, 32) if h + 2 <= window) or (window - 2,)
    dims = [
        Dimension("horizon", choices=horizons),
        Dimension("renoise_levels", 0, 8, integer=True),
        Dimension("calls_per_step", 1, 2, integer=True),
        Dimension("candidates", choices=(4, 8, 16, 32)),
        Dimension("selection", choices=("best", "mppi")),
        Dimension("temperature", 0.01, 1.0, log=True),
        Dimension("noise_scale", 0.1, 1.0, log=True),
        Dimension("noise_scale_share", 0.0, 1.0),
        Dimension("action_window", 1, 8, integer=True),
        Dimension("action_gain", 1.0, 2.5),
        Dimension("action_gain_knee", 0.0, 0.8),
        Dimension("front_tokens", choices=(0, 8)),
        Dimension("refresh_every", 1, 4, integer=True),
    ]
    if model_info["sampling_levels"] == 0:  # a distilled model samples at its own K
        levels = tuple(k for k in (4, 8, 16) if k <= model_info["num_timesteps"])
        dims.insert(1, Dimension("levels", choices=levels))
    if with_value_model:
        dims += [Dimension("value_weight", 0.01, 1.0, log=True),
                 Dimension("value_step", 0, 16, integer=True)]
    if model_info.get("outcome_condition"):  # classifier-free guidance toward an outcome
        # Off and 1 (the conditioned model alone) cost one model call per
        # window, the others two: a continuous range would almost never
        # try the one-call settings. A CFG-aware student takes weights up
        # to its maximum, each in one call.
        most = model_info.get("max_outcome_guidance", 0.0) or math.inf
        weights = tuple(w for w in (0.0, 1.0, 1.5, 2.0, 3.0) if w <= most)
        dims += [Dimension("outcome_guidance", choices=weights),
                 Dimension("target_outcome", 0.5, 1.0)]
    return {d.key: d for d in dims}


def _parse_value(key, text, default):
    """`text` as option `key`'s type (that of its default), checked by the library."""
    try:
        if isinstance(default, bool):
            if text not in ("true", "false"):
                raise ValueError(f"{key} is true or false, got '{text}'")
            value = text == "true"
        elif isinstance(default, int):
            value = int(text)
        elif isinstance(default, float):
            value = float(text)
        else:
            value = text
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{key}: '{text}' is not a finite number")
        _dfmpc.PlannerOptions(**{key: value})  # the option table's range check
    except (TypeError, ValueError) as error:
        raise ValueError(f"--space {key}: {error}") from None
    return value


def check_key(key):
    """Refuses a key that is no option, or one a task file may not set."""
    try:
        _dfmpc.PlannerOptions(**{key: option_defaults().get(key, 0)})
    except TypeError as error:  # unknown: the library's message suggests a name
        raise ValueError(f"--space: {error}") from None
    if key not in task_keys():
        raise ValueError(f"--space {key}: a per-run option (the caller's machine or run, "
                         "refused in task files) is not tuned")


def parse_entry(entry):
    """'KEY=LOW:HIGH[:log]', 'KEY=A,B,C' or 'KEY=VALUE' as a Dimension or a fixed value.

    Returns (key, Dimension) or (key, value).
    """
    key, sep, text = entry.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"--space '{entry}': expected KEY=LOW:HIGH, KEY=A,B,... or KEY=VALUE")
    check_key(key)
    default = option_defaults()[key]
    if not text:
        raise ValueError(f"--space {key}: empty range")
    if "," in text:
        choices = tuple(_parse_value(key, c.strip(), default) for c in text.split(",") if c.strip())
        if not choices:
            raise ValueError(f"--space {key}: empty list of choices")
        return key, Dimension(key, choices=tuple(dict.fromkeys(choices)))
    if ":" in text:
        if isinstance(default, (bool, str)):
            raise ValueError(f"--space {key}: a {type(default).__name__} option takes choices "
                             "(A,B), not a range")
        parts = text.split(":")
        log = len(parts) == 3 and parts[2] == "log"
        if len(parts) != 2 and not log:
            raise ValueError(f"--space {key}: a range is LOW:HIGH or LOW:HIGH:log, got '{text}'")
        low, high = (_parse_value(key, p, default) for p in parts[:2])
        if not low < high:
            raise ValueError(f"--space {key}: empty range {parts[0]}:{parts[1]} "
                             f"(LOW must be below HIGH; KEY=VALUE fixes a value)")
        if log and low <= 0:
            raise ValueError(f"--space {key}: a log range needs LOW > 0")
        return key, Dimension(key, low, high, integer=isinstance(default, int), log=log)
    return key, _parse_value(key, text, default)


def build_space(model_info, entries=(), keys=None, with_value_model=False):
    """The searched dimensions and the fixed values, from the defaults and the user's words.

    `keys` (names) narrows the default space; each `entries` item adds,
    replaces or fixes one option. Returns (dimensions by key, fixed values by key).
    """
    space = default_space(model_info, with_value_model)
    if keys is not None:
        for key in keys:
            check_key(key)
            if key not in space:
                raise ValueError(f"--keys {key}: not in the default space "
                                 f"({', '.join(space)}); give its range with --space")
        space = {k: d for k, d in space.items() if k in keys}
    fixed = {}
    for entry in entries:
        key, what = parse_entry(entry)
        if key == "levels" and model_info["sampling_levels"] > 0:
            raise ValueError(f"--space levels: the model was distilled to sample at K = "
                             f"{model_info['sampling_levels']}; its levels cannot vary")
        space.pop(key, None)
        fixed.pop(key, None)
        if isinstance(what, Dimension):
            space[key] = what
        else:
            fixed[key] = what
    if not space:
        raise ValueError("the search space is empty: every option is fixed")
    return space, fixed


def consistent(options, distilled_levels=0):
    """`options` with dependent values moved inside their limits.

    Re-noise at most the levels (a distilled model's K where `options` has
    none), an action window and a valued step within the horizon (a warm
    plan's valued step before its last token, which rests at pure noise), a
    block-cache front shorter than the horizon; a value without effect (an
    MPPI temperature under best-of selection, a refresh period without a
    block cache or a front without a refresh period, a target outcome
    without guidance) at its default, so that a table names only what acts.
    """
    options = dict(options)
    defaults = option_defaults()
    if "temperature" in options and options.get("selection", defaults["selection"]) != "mppi":
        options["temperature"] = defaults["temperature"]
    levels = options.get("levels", distilled_levels)
    if levels and "renoise_levels" in options:
        options["renoise_levels"] = min(options["renoise_levels"], levels)
    horizon = options.get("horizon")
    if horizon:
        if "action_window" in options:
            options["action_window"] = min(options["action_window"], horizon)
        if "value_step" in options:
            # A warm plan's last token rests at pure noise (level K at the
            # default u), with no estimate for a critic to value: the
            # planner refuses that step.
            warm = options.get("mode", defaults["mode"]) == "warm"
            options["value_step"] = min(options["value_step"], horizon - 1 if warm else horizon)
        if options.get("front_tokens", 0) >= horizon:
            options["front_tokens"] = 0
    if "refresh_every" in options and not options.get("front_tokens"):
        options["refresh_every"] = defaults["refresh_every"]
    # The block cache runs only the front between refreshes: without a
    # period above 1 every step is a refresh.
    if options.get("front_tokens") and options.get("refresh_every", defaults["refresh_every"]) <= 1:
        options["front_tokens"] = defaults["front_tokens"]
    if "target_outcome" in options and not options.get("outcome_guidance"):
        options["target_outcome"] = defaults["target_outcome"]
    return options
