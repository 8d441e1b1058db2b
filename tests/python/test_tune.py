"""dfmpc tune: a tiny search writes a [planner] table the task check accepts,
refuses settings over the latency budget or rougher than a limit, explains
bad input, confirms its leaders, and keeps the best table whole on Ctrl-C.
Short episodes of the shipped pendulum model."""

import csv
import shutil
import signal
import subprocess

import pytest

import dfmpc
from dfmpc.tuning import space, table

from conftest import ROOT

pytest.importorskip("optuna")

TASK = ROOT / "envs" / "tasks" / "pendulum_swingup"
SHORT = ["--episodes", "2", "--steps", "30", "--check-episodes", "1", "--confirm-episodes", "1"]


@pytest.fixture
def task_copy(tmp_path, pendulum_model):
    """A copy of the pendulum's task folder and model, which tuning may rewrite."""
    folder = tmp_path / "pendulum_swingup"
    shutil.copytree(TASK, folder)
    model = tmp_path / "pendulum.pt"
    shutil.copy(pendulum_model, model)
    return folder, model


def outside_planner_table(text):
    """The task file without its [planner] table (what tuning must leave alone)."""
    return table.replace_table(text, "")


def planner_table(text):
    start = text.index("[planner]")
    end = text.find("\n[", start)
    return text[start:] if end < 0 else text[start:end]


def run_tune(tool, folder, model, *arguments):
    return subprocess.run([tool, "tune", "--task", str(folder), "--model", str(model),
                           *arguments], capture_output=True, text=True, timeout=600)


def test_a_tiny_search_writes_a_table_the_task_check_accepts(dfmpc_tool, task_copy, tmp_path):
    folder, model = task_copy
    before = (folder / "task.toml").read_text()
    report = tmp_path / "tune.csv"
    done = run_tune(dfmpc_tool, folder, model, "--trials", "3", "--jobs", "2",
                    "--keys", "selection,temperature,action_window", "--budget-ms", "1000",
                    "--csv", str(report), *SHORT)
    assert done.returncode == 0, done.stderr
    after = (folder / "task.toml").read_text()
    assert "Chosen by `dfmpc tune` from 3 trials" in planner_table(after)
    assert "action_gain" not in planner_table(after)  # not searched: the library default
    assert outside_planner_table(after) == outside_planner_table(before)
    check = subprocess.run([dfmpc_tool, "task", "check", str(folder)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stderr
    # The model was stamped: planning from it alone uses the tuned table.
    tuned = dfmpc.Planner.from_file(str(model)).options
    written = dfmpc.tuned_options(str(folder))
    for key in ("selection", "temperature", "action_window", "action_gain", "levels"):
        assert getattr(tuned, key) == getattr(written, key), key
    assert tuned.action_gain == 1.0 and tuned.levels == 16
    # The leaders ran again on the search's 2 episodes and 1 more before the choice.
    assert "confirming" in done.stdout and "the leaders again on 3" in planner_table(after)
    with open(report) as rows:
        rows = list(csv.DictReader(rows))
    assert [int(row["episodes"]) for row in rows] == [3, 3, 3, 1, 1, 1]
    settings = [(row["setting"], row["seeds"]) for row in rows]
    assert settings == [("library defaults", "eval --seed 1"), ("task file", "eval --seed 1"),
                        ("tuned", "eval --seed 1"), ("library defaults", "eval --seed 0"),
                        ("task file", "eval --seed 0"), ("tuned", "eval --seed 0")]


def test_a_setting_over_the_latency_budget_is_refused(dfmpc_tool, task_copy):
    folder, model = task_copy
    before = (folder / "task.toml").read_text()
    # 512 candidates take tens of one-candidate calls' time per step.
    done = run_tune(dfmpc_tool, folder, model, "--trials", "1", "--jobs", "1",
                    "--keys", "action_window", "--space", "candidates=512",
                    "--budget-ms", "8", "--episodes", "1", "--steps", "60")
    assert done.returncode == 1
    assert "over budget (warm-step p99" in done.stdout + done.stderr
    assert "file is unchanged" in done.stderr
    assert (folder / "task.toml").read_text() == before


def test_a_setting_rougher_than_the_limit_is_refused(dfmpc_tool, task_copy):
    folder, model = task_copy
    before = (folder / "task.toml").read_text()
    # A swing-up moves its actions every step: no setting changes them by less.
    done = run_tune(dfmpc_tool, folder, model, "--trials", "1", "--jobs", "1",
                    "--keys", "action_window", "--max-abs-da", "1e-6", "--budget-ms", "1000",
                    "--episodes", "1", "--steps", "60")
    assert done.returncode == 1
    assert "too rough (mean |Δa|" in done.stdout + done.stderr
    assert "file is unchanged" in done.stderr
    assert (folder / "task.toml").read_text() == before


@pytest.mark.parametrize("options, message", [
    ({"space": ("levls=1:4",)}, "levls"),
    ({"space": ("temperature=0.5:0.1",)}, "empty range"),
    ({"space": ("seed=1:3",)}, "per-run option"),
    ({"space": ("action_gain_knee=0:1.5",)}, "action_gain_knee"),
    ({"keys": ("eta",)}, "not in the default space"),
    ({"budget_ms": 0.001}, "below one model call"),
    ({"trials": 0}, "trials must be at least 1"),
    ({"max_abs_da": -0.1}, "max_abs_da must be >= 0"),
    ({"score": "median"}, "score must be one of mean, worst-quarter"),
    ({"confirm_episodes": -1}, "confirm_episodes must be >= 0"),
    ({"check_seed": 1}, "never saw"),
    ({"randomize": "gravity=0.5:2"}, "gravity"),
    ({"perturb": "mass=0.7:1.3"}, "perturb: 'mass=0.7:1.3' is not name=value"),
    ({"perturb": "mass=1.5", "randomize": "mass=0.7:1.3"}, "given twice"),
    ({"randomize": "mass=heavy"}, "not a number"),
    ({"randomize": "mass=-1:2"}, "mass"),
])
def test_bad_input_is_a_clear_error(task_copy, options, message):
    folder, model = task_copy
    before = (folder / "task.toml").read_text()
    with pytest.raises(ValueError, match=message):
        dfmpc.tune(str(folder), str(model), **options)
    assert (folder / "task.toml").read_text() == before


def test_a_randomized_search_scores_and_compares_perturbed_episodes(dfmpc_tool, task_copy,
                                                                     tmp_path):
    folder, model = task_copy
    report = tmp_path / "tune.csv"
    done = run_tune(dfmpc_tool, folder, model, "--trials", "2", "--jobs", "2",
                    "--keys", "action_window", "--budget-ms", "1000", "--csv", str(report),
                    "--randomize", "mass=0.5:0.6,delay=2:2", "--score", "worst-quarter",
                    *SHORT)
    assert done.returncode == 0, done.stderr
    table = planner_table((folder / "task.toml").read_text())
    assert "Every episode perturbed as eval --randomize mass=0.5:0.6,delay=2:2" in table
    assert "scored by the worst quarter of episodes" in table
    with open(report) as rows:
        rows = {(row["setting"], row["seeds"], row["perturbation"]): row
                for row in csv.DictReader(rows)}
    perturbed = "mass=0.5:0.6 delay=2:2"
    for setting in ("library defaults", "task file", "tuned"):
        assert (setting, "eval --seed 1", perturbed) in rows
        assert (setting, "eval --seed 0", perturbed) in rows
        assert (setting, "eval --seed 0", "") in rows  # the unseen episodes, unperturbed too
    # The perturbation reached the episodes: the same setting on the same
    # unseen episode acts otherwise (30 steps are too few for a reward).
    tuned = [rows[("tuned", "eval --seed 0", p)]["mean_abs_da"] for p in (perturbed, "")]
    assert tuned[0] != tuned[1]


def test_the_worst_quarter_scores_the_lowest_returns():
    from dfmpc.tuning import episodes
    # Five episodes: the lowest two (a quarter, rounded up); one: itself.
    assert episodes.worst_quarter([10.0, 0.0, 5.0, 8.0, 9.0]) == 2.5
    assert episodes.worst_quarter([7.0]) == 7.0
    result = episodes.Episodes(returns=[980.0, 0.0, 975.0, 990.0], action_changes=[0.1] * 4)
    # The mean hides the failed episode; the worst quarter is that episode.
    assert result.score("mean") == pytest.approx(736.25)
    assert result.score("worst-quarter") == 0.0


def test_perturbation_texts_become_make_env_keywords():
    from dfmpc.tuning import episodes

    assert episodes.perturbation("obs_noise=0.03, damping=1.5", "mass=0.7:1.3") == {
        "obs_noise": 0.03, "damping": 1.5, "mass": (0.7, 1.3)}
    assert episodes.perturbation() == {}
    with pytest.raises(ValueError, match="randomize: 'mass' is not"):
        episodes.perturbation(randomize="mass")


def test_a_model_of_another_task_is_refused(task_copy):
    folder, _ = task_copy
    other = ROOT / "examples" / "models" / "cartpole_balance.pt"
    with pytest.raises(ValueError, match="cartpole_balance"):
        dfmpc.tune(str(folder), str(other), trials=1)


def test_ctrl_c_keeps_the_best_table_whole(dfmpc_tool, task_copy):
    folder, model = task_copy
    tuner = subprocess.Popen(
        [dfmpc_tool, "tune", "--task", str(folder), "--model", str(model), "--trials", "100",
         "--jobs", "1", "--keys", "action_window", "--budget-ms", "1000", *SHORT],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    lines = []
    for line in tuner.stdout:  # until the first trial has finished
        lines.append(line)
        if "|Δa|" in line:
            break
    tuner.send_signal(signal.SIGINT)
    output, _ = tuner.communicate(timeout=120)
    assert tuner.returncode == 130, "".join(lines) + output
    assert "interrupted" in output
    written = (folder / "task.toml").read_text()
    assert "Chosen by `dfmpc tune`" in planner_table(written)
    check = subprocess.run([dfmpc_tool, "task", "check", str(folder)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stderr


def test_the_planner_table_is_replaced_in_place_or_added():
    text = ("name = \"x\"\n[planner]\n# old narrative\nlevels = 8\n\n"
            "# The oracle: ...\n[oracle]\nhorizon = 60\n")
    new = table.format_table({"temperature": 0.1, "candidates": 16, "selection": "mppi",
                              "action_gain": 2.0}, ["found"])
    replaced = table.replace_table(text, new)
    assert replaced == ("name = \"x\"\n[planner]\n# found\ntemperature = 0.1\ncandidates = 16\n"
                        "selection = \"mppi\"\naction_gain = 2.0\n\n# The oracle: ...\n"
                        "[oracle]\nhorizon = 60\n")
    assert table.replace_table("name = \"x\"\n", new) == "name = \"x\"\n\n" + new


def test_a_valued_step_stays_where_the_plan_has_estimates():
    # A warm plan's last token rests at pure noise, which the planner refuses
    # to value; a replanned one is clean throughout.
    assert space.consistent({"horizon": 16, "value_step": 16})["value_step"] == 15
    assert space.consistent({"horizon": 16, "value_step": 16, "mode": "replan"})["value_step"] == 16
    assert space.consistent({"horizon": 32, "value_step": 16})["value_step"] == 16


def test_a_table_names_only_the_block_cache_settings_that_act():
    defaults = space.option_defaults()
    assert space.consistent({"front_tokens": 8, "refresh_every": 4}) == {
        "front_tokens": 8, "refresh_every": 4}
    # Every step a refresh: the front is the whole plan.
    assert space.consistent({"front_tokens": 8, "refresh_every": 1})["front_tokens"] == \
        defaults["front_tokens"]
    assert space.consistent({"front_tokens": 8})["front_tokens"] == defaults["front_tokens"]
    # No front: no period.
    assert space.consistent({"front_tokens": 0, "refresh_every": 4})["refresh_every"] == \
        defaults["refresh_every"]
    # A front as long as the plan is no cache.
    assert space.consistent({"horizon": 16, "front_tokens": 16, "refresh_every": 4}) == {
        "horizon": 16, "front_tokens": defaults["front_tokens"],
        "refresh_every": defaults["refresh_every"]}


def test_an_outcome_conditioned_model_adds_the_guidance_to_the_space():
    info = {"train_window": 40, "sampling_levels": 0, "num_timesteps": 1000}
    plain = space.default_space(info)
    assert "outcome_guidance" not in plain and "target_outcome" not in plain
    conditioned = space.default_space({**info, "outcome_condition": True})
    assert set(conditioned) - set(plain) == {"outcome_guidance", "target_outcome"}
    assert conditioned["outcome_guidance"].choices == (0.0, 1.0, 1.5, 2.0, 3.0)
    # A CFG-aware student is searched only over the weights it takes.
    student = space.default_space({**info, "outcome_condition": True,
                                   "max_outcome_guidance": 1.5})
    assert student["outcome_guidance"].choices == (0.0, 1.0, 1.5)
    unguided = space.consistent({"outcome_guidance": 0.0, "target_outcome": 0.6})
    assert unguided["target_outcome"] == space.option_defaults()["target_outcome"]
    assert space.consistent({"outcome_guidance": 1.5, "target_outcome": 0.6})["target_outcome"] == 0.6


def test_the_leaders_by_return_and_the_chosen_setting_are_confirmed():
    from dfmpc.tuning import confirm

    def trial(number, value, finished=True):
        return confirm.Confirmed(number, value, {"summary": {}} if finished else {})

    trials = [trial(0, 5.0), trial(1, 9.0), trial(2, None, finished=False), trial(3, 7.0),
              trial(4, 8.0), trial(5, 6.0), trial(6, 1.0)]
    assert [t.number for t in confirm.leaders(trials, trials[6])] == [1, 4, 3, 5, 6]
    assert [t.number for t in confirm.leaders(trials, trials[4])] == [1, 4, 3, 5]
    assert [t.number for t in confirm.leaders(trials[:2], None)] == [1, 0]
