"""dfmpc: model-predictive control with a diffusion-forcing world model.

The planner (Planner, AsyncPlanner), the MuJoCo environments (make_env),
datasets (collect, read_dataset, write_dataset), training (train,
train_mlp, train_value), step distillation (distill) and open-loop video
rollouts (rollout), from the C++
library; tune finds a task's planner options (Optuna, dfmpc.tuning). Arrays are numpy float64; a wrong shape
or dtype raises ValueError naming the expected shape.
"""

from ._dfmpc import (  # noqa: F401
    AsyncPlanner,
    AsyncStats,
    DistillerOptions,
    Env,
    MlpTrainOptions,
    OptimizerOptions,
    Plan,
    Planner,
    PlannerOptions,
    RolloutOptions,
    StepStats,
    TrainerOptions,
    TransformerConfig,
    collect,
    distill,
    make_env,
    model_info,
    option_table,
    read_dataset,
    rollout,
    task_file,
    task_names,
    train,
    train_mlp,
    train_value,
    tuned_options,
    write_dataset,
)

__all__ = [
    "AsyncPlanner",
    "AsyncStats",
    "DistillerOptions",
    "Env",
    "MlpTrainOptions",
    "OptimizerOptions",
    "Plan",
    "Planner",
    "PlannerOptions",
    "RolloutOptions",
    "StepStats",
    "TrainerOptions",
    "TransformerConfig",
    "collect",
    "distill",
    "make_env",
    "model_info",
    "option_table",
    "read_dataset",
    "rollout",
    "task_file",
    "task_names",
    "train",
    "train_mlp",
    "train_value",
    "tune",
    "tuned_options",
    "write_dataset",
]


def tune(task, model, **options):
    """Finds `task`'s planner options for `model` with Optuna and writes them
    as its task file's [planner] table; dfmpc.tuning.study.Settings lists the
    options (those of `dfmpc tune --help`). Returns a dfmpc.tuning.study.Result."""
    from .tuning.study import tune as run  # Optuna loads only when tuning

    return run(task, model, **options)
