"""The search: Optuna's TPE sampler in worker processes that share a journal file.

Each trial draws a setting from the space, runs closed-loop episodes on the
held-out seeds (pruned by the median rule after two episodes, refused when
its warm steps exceed the latency budget, or its actions the smoothness
limit where one is given) and scores their mean return (or that of their
worst quarter, `score`), in the task
perturbed as eval's --perturb and --randomize where those are given.
The main process shows progress and, at the end or on Ctrl-C, writes the
best setting as the task file's [planner] table; of the settings whose
return is within `tolerance` of the best, the smoothest (least mean |Δa|)
is the best. The leaders run again on more episodes before that choice
(confirm.py).
"""

import dataclasses
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

from .. import _dfmpc
from . import confirm as confirm_lib
from . import episodes as episodes_lib
from . import report
from . import space as space_lib
from . import table as table_lib


@dataclasses.dataclass
class Settings:
    """What `dfmpc tune` was asked for (see __main__.py's --help for each)."""

    task: str
    model: str
    budget_ms: float = 10.0
    trials: int = 40
    episodes: int = 5
    seed: int = 1
    check_episodes: int = 10
    check_seed: int = 0
    confirm_episodes: int = 10
    steps: int = 0
    jobs: int = 0
    minutes: float = 0.0
    space: tuple = ()
    keys: tuple = None
    tolerance: float = 0.01
    score: str = "mean"
    max_abs_da: float = 0.0
    perturb: str = ""
    randomize: str = ""
    out: str = ""
    csv: str = ""
    stamp: bool = True
    sampler_seed: int = 0
    value_model: str = ""
    tool: str = ""

    def check(self):
        if isinstance(self.space, str):
            self.space = (self.space,)
        if isinstance(self.keys, str):
            self.keys = tuple(k.strip() for k in self.keys.split(",") if k.strip())
        positive = {"trials": self.trials, "episodes": self.episodes}
        for name, value in positive.items():
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        for name in ("check_episodes", "confirm_episodes", "steps", "jobs", "seed", "check_seed",
                     "sampler_seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.budget_ms > 0:
            raise ValueError(f"budget_ms must be > 0, got {self.budget_ms}")
        if not 0 <= self.tolerance < 1:
            raise ValueError(f"tolerance must be in [0, 1), got {self.tolerance}")
        if self.score not in episodes_lib.SCORES:
            raise ValueError(f"score must be one of {', '.join(episodes_lib.SCORES)}, "
                             f"got '{self.score}'")
        if not self.max_abs_da >= 0:
            raise ValueError(f"max_abs_da must be >= 0 (0: no limit), got {self.max_abs_da}")
        if not self.minutes >= 0:
            raise ValueError(f"minutes must be >= 0 (0: no limit), got {self.minutes}")
        if self.check_seed == self.seed and self.check_episodes > 0:
            raise ValueError(f"check_seed {self.check_seed} is the tuning seed: the check "
                             "must run on episodes the search never saw")
        _dfmpc.make_env(self.task, **self.perturbations()).close()  # names and values

    def perturbations(self):
        """make_env's keywords for the perturbed episodes every trial runs."""
        return episodes_lib.perturbation(self.perturb, self.randomize)

    def perturbation_text(self):
        """The perturbation as eval's --summary writes it: name=value or
        name=low:high, separated by spaces."""
        return " ".join(filter(None, (self.perturb, self.randomize))).replace(",", " ")

    def perturbation_flags(self):
        """The perturbation as eval's flags, e.g. " --randomize mass=0.7:1.5"."""
        return "".join(f" --{flag} {text}" for flag, text in
                       (("perturb", self.perturb), ("randomize", self.randomize)) if text)


@dataclasses.dataclass
class Result:
    """What a tuning run found: the chosen options and where they went."""

    options: dict  # the tuned planner options (task-file keys), as the table writes them
    trials: int  # trials finished
    table_path: str  # the file written, or "" when no trial finished
    csv_path: str  # the comparison's CSV, or "" when it was not run
    interrupted: bool


@dataclasses.dataclass
class _Job:
    """One worker's share of the search (sent to a spawned process)."""

    settings: Settings
    dims: list
    base: dict
    distilled_levels: int
    journal: str
    trials: int
    worker: int
    deadline: float  # time.time() after which no trial starts; 0: none


STUDY = "dfmpc-tune"
# Trials run side by side, one thread each; their spawned processes read this.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _optuna():
    try:
        import optuna
    except ImportError:
        raise RuntimeError("dfmpc tune needs Optuna: apt install python3-optuna "
                           "(scripts/setup.sh installs it)") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    return optuna


def _storage(optuna, journal):
    return optuna.storages.JournalStorage(optuna.storages.JournalFileStorage(journal))


def _rounded(options):
    """Real values to 4 significant digits: what the table writes is what ran."""
    return {k: float(f"{v:.4g}") if isinstance(v, float) else v for k, v in options.items()}


def _objective(optuna, job, trial):
    s = job.settings
    sampled = {d.key: d.sample(trial) for d in job.dims}
    overrides = space_lib.consistent(_rounded({**job.base, **sampled}), job.distilled_levels)
    trial.set_user_attr("overrides", overrides)

    def on_episode(done, result):
        if s.max_abs_da > 0:  # twice the limit stops a trial early; its mean decides at the end
            episodes_lib.check_smoothness(result, s.max_abs_da,
                                          slack=1.0 if done == s.episodes else 2.0)
        trial.report(result.score(s.score), done - 1)
        if trial.should_prune():
            trial.set_user_attr("pruned_after", done)
            raise optuna.TrialPruned()

    try:
        result = episodes_lib.run_episodes(
            s.model, s.task, overrides, episodes_lib.episode_seeds(s.seed, s.episodes),
            s.steps, s.budget_ms, on_episode, s.perturbations())
    except episodes_lib.OverBudget as over:
        trial.set_user_attr("refused", f"over budget ({over})")
        raise optuna.TrialPruned() from None
    except episodes_lib.TooRough as rough:
        trial.set_user_attr("refused", f"too rough ({rough})")
        raise optuna.TrialPruned() from None
    except (ValueError, RuntimeError) as error:  # options the library refuses together
        trial.set_user_attr("failed", str(error))
        raise
    trial.set_user_attr("summary", result.summary())
    return result.score(s.score)


def _work(job):
    """A worker process: runs its share of trials until done or out of time.

    Ctrl-C reaches the whole process group; the main process alone answers
    it, and stops the workers.
    """
    _ignore_interrupts()
    optuna = _optuna()
    study = optuna.load_study(
        study_name=STUDY, storage=_storage(optuna, job.journal),
        sampler=optuna.samplers.TPESampler(seed=job.settings.sampler_seed * 1009 + job.worker),
        pruner=optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1))
    timeout = max(1.0, job.deadline - time.time()) if job.deadline else None
    study.optimize(lambda trial: _objective(optuna, job, trial), n_trials=job.trials,
                   timeout=timeout, catch=(ValueError, RuntimeError))


def _ignore_interrupts():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _choose(trials, tolerance):
    """The smoothest finished trial whose return is within `tolerance` of the best."""
    done = [t for t in trials if t.value is not None and "summary" in t.user_attrs]
    if not done:
        return None
    best = max(t.value for t in done)
    near = [t for t in done if t.value >= best - tolerance * max(abs(best), 1e-9)]
    return min(near, key=lambda t: (t.user_attrs["summary"]["mean_abs_da"], -t.value))


def _describe(trial):
    attrs = trial.user_attrs
    if "summary" in attrs:
        s = attrs["summary"]
        return (f"{trial.value:.1f} (|Δa| {s['mean_abs_da']:.3f}, "
                f"p99 {s['p99_ms']:.2f} ms)")
    if "refused" in attrs:
        return attrs["refused"]
    if "pruned_after" in attrs:
        return f"pruned after {attrs['pruned_after']} episodes"
    return f"failed: {attrs.get('failed', 'interrupted')}"


class _Progress:
    """One line per finished trial: its score, the best so far, time left."""

    def __init__(self, total, deadline):
        self.total, self.deadline, self.start, self.shown = total, deadline, time.time(), set()

    def show(self, trials, tolerance):
        finished = [t for t in trials if t.state.is_finished()]
        best = _choose(finished, tolerance)
        for trial in finished:
            if trial.number in self.shown:
                continue
            self.shown.add(trial.number)
            elapsed = time.time() - self.start
            left = elapsed / len(self.shown) * (self.total - len(self.shown))
            if self.deadline:
                left = min(left, max(0.0, self.deadline - time.time()))
            best_text = (f"best {best.value:.1f} (trial {best.number})" if best
                         else "no setting finished yet")
            print(f"tune: [{len(self.shown):>3}/{self.total}] trial {trial.number}: "
                  f"{_describe(trial)} | {best_text} | {left / 60:.1f} min left", flush=True)


def _task_options(model, task, distilled_levels):
    """The options the task file gives the model today, as explicit task-file keys."""
    options = _dfmpc.Planner.from_file(model, task=task).options
    return {k: getattr(options, k) for k in space_lib.task_keys()
            if not (k == "levels" and distilled_levels)}


def _default_options(distilled_levels):
    defaults = space_lib.option_defaults()
    return {k: defaults[k] for k in space_lib.task_keys()
            if not (k == "levels" and distilled_levels)}


def _table_options(overrides, distilled_levels):
    """The task-file keys that differ from the library's defaults (and a distilled K)."""
    defaults = space_lib.option_defaults()
    chosen = {k: v for k, v in overrides.items()
              if k in space_lib.task_keys() and v != defaults[k]}
    if distilled_levels:
        chosen = {"levels": distilled_levels, **chosen}
    return chosen


def _write_table(s, options, finished, distilled_levels, confirmed_on):
    task_file = _dfmpc.task_file(s.task)
    out = s.out or task_file
    with open(task_file) as source:
        text = source.read()
    comments = [f"Chosen by `dfmpc tune` from {finished} trials of {s.episodes} episodes "
                f"(eval seed {s.seed}"
                f"{f', the leaders again on {confirmed_on}' if confirmed_on else ''}), "
                f"warm-step p99 within {s.budget_ms:g} ms"
                f"{f', mean |Δa| within {s.max_abs_da:g}' if s.max_abs_da else ''}"
                f"{', scored by the worst quarter of episodes' if s.score != 'mean' else ''};",
                "keys not listed take the library defaults (docs/planner_options.md)."]
    if s.perturb or s.randomize:
        comments.insert(1, f"Every episode perturbed as eval{s.perturbation_flags()};")
    table = table_lib.format_table(_table_options(options, distilled_levels), comments)
    table_lib.write_whole(out, table_lib.replace_table(text, table))
    print(f"tune: wrote the [planner] table to {out}", flush=True)
    if s.stamp and not s.out:
        _stamp(s, os.path.dirname(task_file))
    return out


def _stamp(s, task_dir):
    tool = s.tool or os.environ.get("DFMPC_TOOL") or shutil.which("dfmpc")
    command = [tool or "dfmpc", "task", "stamp", task_dir, s.model]
    if not tool:
        print(f"tune: no dfmpc tool found to stamp the model; run: {' '.join(command)}")
        return
    subprocess.run(command, check=True)


def _evaluate(arguments):
    model, task, overrides, seed, episodes, steps, perturbations = arguments
    result = episodes_lib.run_episodes(model, task, overrides,
                                       episodes_lib.episode_seeds(seed, episodes), steps,
                                       perturbations=perturbations)
    return result.summary()


def _compare(s, rows_to_run, jobs):
    """Runs (label, overrides, seed, episodes, perturbed) rows in parallel;
    returns report rows."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, initializer=_ignore_interrupts) as pool:
        summaries = pool.map(_evaluate, [
            (s.model, s.task, {**o, "seed": s.seed}, seed, n, s.steps,
             s.perturbations() if perturbed else {}) for _, o, seed, n, perturbed in rows_to_run])
    return [{"setting": label, "seeds": f"eval --seed {seed}",
             "perturbation": s.perturbation_text() if perturbed else "", **summary}
            for (label, _, seed, _, perturbed), summary in zip(rows_to_run, summaries)]


def _start_workers(context, job, jobs):
    shares = [job.trials // jobs + (1 if i < job.trials % jobs else 0) for i in range(jobs)]
    workers = []
    for worker, share in enumerate(shares):
        if share:
            process = context.Process(target=_work,
                                      args=(dataclasses.replace(job, trials=share, worker=worker),))
            process.start()
            workers.append(process)
    return workers


def _stop_workers(workers):
    """Ends the workers; their running trials are dropped unfinished."""
    for process in workers:
        process.terminate()
    for process in workers:
        process.join()


def _check_model(s, info):
    with _dfmpc.make_env(s.task) as env:
        if info["task"] and info["task"] != env.name:
            raise ValueError(f"{s.model} is a model of task '{info['task']}', not of "
                             f"'{env.name}' ({s.task})")


def _search(optuna, s, job, jobs, defaults):
    """Runs the trials in `jobs` worker processes; returns (trials, interrupted)."""
    scratch = tempfile.mkdtemp(prefix="dfmpc-tune-")
    job = dataclasses.replace(job, journal=os.path.join(scratch, "journal.log"))
    study = optuna.create_study(study_name=STUDY, storage=_storage(optuna, job.journal),
                                direction="maximize")
    # The first trial: the library's defaults, where the space holds them.
    study.enqueue_trial({d.key: defaults[d.key] for d in job.dims
                         if d.key in defaults and d.contains(defaults[d.key])})
    workers = _start_workers(multiprocessing.get_context("spawn"), job, jobs)
    progress = _Progress(s.trials, job.deadline)
    interrupted, trials = False, []
    try:
        while any(p.is_alive() for p in workers):
            time.sleep(1.0)
            trials = study.get_trials(deepcopy=False)
            progress.show(trials, s.tolerance)
        trials = study.get_trials(deepcopy=False)
        progress.show(trials, s.tolerance)
    except KeyboardInterrupt:  # the last complete reading of the journal stands
        interrupted = True
        print("\ntune: interrupted; keeping the best finished trial", flush=True)
        _stop_workers(workers)
    shutil.rmtree(scratch, ignore_errors=True)
    return [t for t in trials if t.state.is_finished()], interrupted


def _closing_comparison(s, settings, best, jobs, task_name):
    """Defaults, the old table and the tuned one, on the tuning and unseen
    seeds; perturbed as the search was, and on the unseen seed unperturbed too."""
    tuned_episodes = best.user_attrs["summary"]["episodes"]
    perturbed = bool(s.perturbations())
    to_run = [(label, o, s.seed, tuned_episodes, perturbed) for label, o in settings[:2]]
    to_run += [(label, o, s.check_seed, s.check_episodes, perturbed) for label, o in settings]
    if perturbed:
        to_run += [(label, o, s.check_seed, s.check_episodes, False) for label, o in settings]
    print(f"tune: comparing on eval --seed {s.seed} and on {s.check_episodes} episodes of "
          f"eval --seed {s.check_seed}, which the search never saw"
          f"{f', with{s.perturbation_flags()} and without' if perturbed else ''}", flush=True)
    rows = _compare(s, to_run, jobs)
    rows.insert(2, {"setting": "tuned", "seeds": f"eval --seed {s.seed}",
                    "perturbation": s.perturbation_text() if perturbed else "",
                    **best.user_attrs["summary"]})  # the chosen trial ran these episodes
    print(report.rows_table(rows))
    csv_path = s.csv or f"tune_{task_name}.csv"
    report.write_csv(csv_path, rows)
    print(f"tune: wrote {csv_path}")
    return csv_path


def tune(task, model, **options):
    """Searches the planner options of `task` for `model`; see Settings for the options.

    Writes the best setting as the task file's [planner] table (or `out`),
    stamps the model with it, prints and writes (csv) the comparison with
    the library defaults and the task file's table. Returns a Result.
    """
    s = Settings(task=task, model=model, **options)
    s.check()
    optuna = _optuna()
    info = _dfmpc.model_info(s.model)
    _check_model(s, info)
    distilled = info["sampling_levels"]
    dims, fixed = space_lib.build_space(info, tuple(s.space), s.keys, bool(s.value_model))
    run_options = {"seed": s.seed, **({"value_model": s.value_model} if s.value_model else {})}
    defaults = _default_options(distilled)
    before = _task_options(s.model, s.task, distilled)
    base = {**defaults, **fixed, **run_options}
    floor_ms = episodes_lib.one_call_ms(s.model, s.task, base)
    if s.budget_ms < floor_ms:
        raise ValueError(f"the budget {s.budget_ms:g} ms is below one model call: a warm step "
                         f"of one call at one candidate takes {floor_ms:.2f} ms (p50) here")
    jobs = min(s.jobs or os.cpu_count() or 1, s.trials)
    print(f"tune: {s.task} with {s.model}: {s.trials} trials of {s.episodes} episodes "
          f"(eval seed {s.seed}{f', {s.steps} steps' if s.steps else ''}) in {jobs} processes, "
          f"warm-step p99 <= {s.budget_ms:g} ms (one call: {floor_ms:.2f} ms)"
          f"{f', mean |Δa| <= {s.max_abs_da:g}' if s.max_abs_da else ''}"
          f"{f', scored by the {s.score} return' if s.score != 'mean' else ''}"
          f"{f', episodes perturbed by{s.perturbation_flags()}' if s.perturb or s.randomize else ''}",
          flush=True)
    for dim in dims.values():
        print(f"tune:   {dim}")
    for key, value in fixed.items():
        print(f"tune:   {key} = {value} (fixed)")

    deadline = time.time() + 60 * s.minutes if s.minutes else 0.0
    job = _Job(s, list(dims.values()), base, distilled, "", s.trials, 0, deadline)
    finished, interrupted = _search(optuna, s, job, jobs, defaults)
    candidates = finished
    best = _choose(candidates, s.tolerance)
    confirmed_on = 0
    if best is not None and s.confirm_episodes and not interrupted:
        try:
            candidates = confirm_lib.confirm(s, finished, best, jobs, _ignore_interrupts)
            best = _choose(candidates, s.tolerance)
            confirmed_on = s.episodes + s.confirm_episodes
        except KeyboardInterrupt:  # the search's choice stands
            interrupted = True
            print("\ntune: interrupted; keeping the best trial of the search", flush=True)
    if best is None:
        reasons = {_describe(t) for t in candidates} or {"none finished"}
        print(f"tune: no setting finished all its episodes; {s.task}'s file is unchanged "
              f"({'; '.join(sorted(reasons))})", file=sys.stderr)
        return Result({}, len(finished), "", "", interrupted)
    chosen = {k: v for k, v in best.user_attrs["overrides"].items()
              if k in space_lib.task_keys()}
    print(f"tune: chose trial {best.number}: {best.value:.1f} over "
          f"{best.user_attrs['summary']['episodes']} episodes")
    table_path = _write_table(s, chosen, len(finished), distilled, confirmed_on)
    if interrupted or s.check_episodes == 0:
        return Result(chosen, len(finished), table_path, "", interrupted)
    settings = [("library defaults", defaults), ("task file", before), ("tuned", chosen)]
    csv_path = _closing_comparison(s, settings, best, jobs, info["task"] or "task")
    return Result(chosen, len(finished), table_path, csv_path, interrupted)
