// A model file carries its task (issue 26): a planner is made from it with
// no task name and no task folder, with the cost of the task it carries; an
// explicitly given task of another name is refused.
#include "dfmpc/planner/model_task.h"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "dfmpc/planner/planner.h"
#include "dfmpc/planner/task_cost.h"
#include "dfmpc/task/task_spec.h"
#include "tiny_model.h"

namespace dfmpc::planner {
namespace {

namespace fs = std::filesystem;

// A tiny model of a task "my_pendulum" that no folder on disk defines: the
// built-in pendulum's files renamed, carried by the model alone.
std::string SaveModelCarryingItsTask(const std::string& name, bool carry_task) {
  const task::TaskSpec pendulum = task::LoadTaskSpec("pendulum_swingup");
  worldmodel::ModelInfo info;
  info.task = "my_pendulum";
  if (carry_task) {
    info.task_file = pendulum.toml_text;
    const std::string old_name = "name = \"pendulum_swingup\"";
    info.task_file.replace(info.task_file.find(old_name), old_name.size(),
                           "name = \"my_pendulum\"");
    info.task_mjcf = pendulum.mjcf_text;
  }
  info.layout = worldmodel::TokenLayout{1, 3, /*observation_deltas=*/false};
  info.config = worldmodel::testing::TinyConfig(4);
  info.train_window = 64;
  const fs::path path = fs::path(::testing::TempDir()) / name;
  worldmodel::SaveCheckpoint(path.string(), info,
                             worldmodel::Normalizer(torch::zeros({4}), torch::ones({4})),
                             *worldmodel::testing::TinyModel(4));
  return path.string();
}

// Over the task file's tuned options.
PlannerOverrides Small() {
  return {{"horizon", 4}, {"levels", 4}, {"candidates", 2}, {"action_window", 1}};
}

TEST(ModelTaskTest, APlannerNeedsNoTaskNameForAModelThatCarriesItsTask) {
  const std::string path = SaveModelCarryingItsTask("carries_task.pt", true);
  EXPECT_EQ(ModelTask(path).name, "my_pendulum");
  const auto planner = Planner::FromFile(path, Small());
  planner->Reset(Eigen::Vector3d(-1.0, 0.0, 0.0));
  const Eigen::VectorXd action = planner->Act(Eigen::Vector3d(-1.0, 0.0, 0.0));
  EXPECT_EQ(action.size(), 1);
  EXPECT_TRUE(action.allFinite());
  // The file's tuned options, with no name either.
  EXPECT_EQ(Planner::FromFile(path)->observation_dim(), 3);
}

TEST(ModelTaskTest, AnExplicitTaskOfAnotherNameIsRefused) {
  const std::string path = SaveModelCarryingItsTask("carries_task_other.pt", true);
  try {
    Planner::FromFile(path, Small(), "pendulum_swingup");
    FAIL() << "a model of my_pendulum was planned with as pendulum_swingup";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("my_pendulum"), std::string::npos) << error.what();
  }
}

TEST(ModelTaskTest, AnOldModelOfATaskThatIsNotBuiltInNamesTheProblem) {
  const std::string path = SaveModelCarryingItsTask("carries_nothing.pt", false);
  try {
    ModelTask(path);
    FAIL() << "a task was found for a model that carries none";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what())
                  .find("carries no task files and its task 'my_pendulum' "
                        "is not built in: give its task folder"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace dfmpc::planner
