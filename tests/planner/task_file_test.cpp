// A task file with a problem is refused with a message that names the file,
// the key and the problem (issue 26's bad input), by the part that reads it:
// the reader (syntax, unknown sections), the environment (MJCF names,
// ranges), the cost (terms, features) and the planner options.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/predictive_sampling.h"
#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"

namespace dfmpc {
namespace {

namespace fs = std::filesystem;

// The built-in pendulum's files, for editing.
const task::TaskSpec& Pendulum() {
  static const task::TaskSpec spec = task::LoadTaskSpec("pendulum_swingup");
  return spec;
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the file";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Builds everything a task file feeds: the environment, the cost, the tuned
// planner options and the oracle's.
void BuildAll(const task::TaskSpec& spec) {
  envs::MakeEnv(spec);
  planner::MakeTaskCost(spec);
  planner::TunedPlannerOptions(spec);
  envs::OracleOptions(spec);
}

// The message of what `build` throws for the pendulum's task file with
// `from` replaced by `to` (or its MJCF, when `in_mjcf`).
std::string ErrorOf(const std::string& from, const std::string& to, bool in_mjcf = false) {
  const std::string toml =
      in_mjcf ? Pendulum().toml_text : Replaced(Pendulum().toml_text, from, to);
  const std::string mjcf =
      in_mjcf ? Replaced(Pendulum().mjcf_text, from, to) : Pendulum().mjcf_text;
  try {
    BuildAll(task::ParseTaskSpec(toml, mjcf, "arm/task.toml"));
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  ADD_FAILURE() << "replacing '" << from << "' with '" << to << "' was accepted";
  return "";
}

TEST(TaskFileTest, TheBuiltInFileBuildsAndItsTextRoundTrips) {
  BuildAll(Pendulum());
  const task::TaskSpec copy =
      task::ParseTaskSpec(Pendulum().toml_text, Pendulum().mjcf_text, "copy");
  EXPECT_EQ(copy.name, "pendulum_swingup");
  EXPECT_EQ(envs::MakeEnv(copy)->observation_spec().size(), 3);
}

TEST(TaskFileTest, ProblemsAreNamedWithTheFileAndTheKey) {
  struct Case {
    std::string from, to, message;
    bool in_mjcf;
  };
  const Case cases[] = {
      {"name = \"pendulum_swingup\"", "name = \"pendulum_swingup\"\ncolour = \"red\"",
       "arm/task.toml: colour: unknown key", false},
      {"sensor = \"hinge_velocity\"\nscale", "sensor = \"hinge_velocty\"\nscale",
       "arm/task.toml: observation[2].sensor: the MJCF has no sensor 'hinge_velocty'", false},
      {"index = 2", "index = \"2\"",
       "arm/task.toml: observation[0].index: expected an integer, got a string", false},
      {"index = 2", "index = 3", "observation[0].index: 3 is outside sensor 'pole_axis'", false},
      {"scale = 4.0", "scale = nan", "observation[2].scale: must be finite", false},
      {"scale = 4.0", "scale = 4.0\nsacle = 1", "observation[2].sacle: unknown key", false},
      {"uniform = [-3.141592653589793, 3.141592653589793]", "uniform = [1, -1]",
       "initial[0].uniform: expected [lower, upper]", false},
      {"actions = [\"torque\"]", "actions = [\"torq\"]",
       "arm/task.toml: actions: the MJCF has no actuator 'torq'", false},
      {"term = \"upright\"\ncos = \"cos\"", "term = \"upright\"\ncos = \"cosine\"",
       "arm/task.toml: cost[0].cos: no observation feature 'cosine' (features: cos, sin, "
       "velocity)",
       false},
      {"term = \"upright\"", "term = \"uprigth\"", "cost[0].term: unknown cost term 'uprigth'",
       false},
      {"weight = 0.001", "weight = -1", "cost[2].weight: must be >= 0", false},
      {"0.125 * velocity^2", "0.125 * velocty^2",
       "arm/task.toml: cost[1].expression: unknown variable 'velocty' (did you mean 'velocity'?)",
       false},
      {"[planner]", "[planner]\nhorizn = 3",
       "arm/task.toml: planner.horizn: unknown planner option 'horizn' (did you mean 'horizon'?)",
       false},
      {"[planner]", "[planner]\nhorizon = 0",
       "arm/task.toml: planner.horizon: planner option 'horizon' must be >= 1, got 0", false},
      {"selection = \"mppi\"", "selection = \"softmax\"",
       "planner.selection: planner option 'selection' must be best or mppi, got 'softmax'", false},
      {"[planner]", "[planner]\ncandidates = 2.5", "planner.candidates: expected an integer",
       false},
      // Options of the caller's run, and the old spellings, are not task file keys.
      {"[planner]", "[planner]\nseed = 3",
       "planner.seed: 'seed' belongs to the caller's run, not to the task file", false},
      {"[planner]", "[planner]\nnum_sinks = 1",
       "planner.num_sinks: unknown planner option 'num_sinks' (did you mean 'sinks'?)", false},
      {"action_window = 8", "action_window = 40",
       "arm/task.toml: [planner]: planner: action window must be in 1..H = 32", false},
      {"samples = 32", "samples = 0", "oracle.samples: must be in 1..4096", false},
      {"episode_physics_steps = 1000", "episode_physics_steps = 1000\nsettle_physics_steps = -1",
       "arm/task.toml: settle_physics_steps: must be in 0..10000, got -1", false},
      {"horizon = 60", "horizon = 100000000", "oracle.horizon: must be in 1..10000 physics steps",
       false},
      {"noise_std = 0.5", "noise_std = 11", "oracle.noise_std: must be in [0, 10]", false},
      {"actions = [\"torque\"]", "actions = [\"torque\", \"torque\"]",
       "arm/task.toml: actions: names actuator 'torque' twice", false},
      {"uniform = [-3.141592653589793, 3.141592653589793]", "uniform = [1e308, 1e308]",
       "initial[0].uniform: must be finite and within +-10000", false},
      {"uniform = [-3.141592653589793, 3.141592653589793]", "orientation = \"uniform\"",
       "initial[0].orientation: joint 'hinge' is not a free or ball joint", false},
      {"tolerance = { bounds = [0.99026806874157036, 1.0] }",
       "tolerance = { bounds = [0.99026806874157036, 1.0], sigmoid = \"gausian\" }",
       "reward.factor[0].tolerance.sigmoid: unknown sigmoid 'gausian'", false},
      {"[[reward.factor]]\nfeature = \"cos\"", "[[reward.factor]]\nfeature = \"height\"",
       "reward.factor[0].feature: no observation feature 'height'", false},
      {"camera = \"fixed\"", "camera = \"top\"", "camera: the MJCF has no camera 'top'", false},
      {"mjcf = \"pendulum.xml\"", "mjcf = \"pendulum.xml\"\n[[observation]",
       "arm/task.toml:", false},
      {"<joint name=\"hinge\" type=\"hinge\"", "<joint name=\"hinge\" type=\"hing\"",
       "arm/task.toml: mjcf: cannot load the MuJoCo model of task 'pendulum_swingup'", true},
  };
  for (const Case& c : cases) {
    const std::string message = ErrorOf(c.from, c.to, c.in_mjcf);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "replacing '" << c.from << "' with '" << c.to << "'\n  got: " << message
        << "\n  expected it to contain: " << c.message;
  }
}

TEST(TaskFileTest, FoldersAndNamesAreCheckedBeforeAnythingIsRead) {
  const fs::path folder = fs::path(::testing::TempDir()) / "dfmpc_task_file_test";
  fs::remove_all(folder);
  auto message = [](const std::string& task) -> std::string {
    try {
      task::LoadTaskSpec(task);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "";
  };
  EXPECT_NE(message("pendulum").find("unknown task 'pendulum' (built in: cartpole_balance"),
            std::string::npos);
  EXPECT_NE(message(folder.string()).find("does not exist"), std::string::npos);
  fs::create_directories(folder);
  EXPECT_NE(message(folder.string()).find("has no task.toml"), std::string::npos);
  std::ofstream(folder / "task.toml") << Pendulum().toml_text;
  EXPECT_NE(message(folder.string()).find("mjcf: no file"), std::string::npos);
  std::ofstream(folder / "pendulum.xml") << Pendulum().mjcf_text;
  EXPECT_EQ(message(folder.string()), "");
  EXPECT_EQ(envs::MakeEnv(folder.string())->name(), "pendulum_swingup");
}

}  // namespace
}  // namespace dfmpc
