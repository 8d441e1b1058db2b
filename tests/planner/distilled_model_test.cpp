// A model distilled to fewer sampling levels (worldmodel/distiller.h)
// carries its K: planners made from its file take it, and explicit options
// of another K are refused.
#include <gtest/gtest.h>
#include <torch/types.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "dfmpc/planner/planner.h"
#include "dfmpc/task/task_spec.h"
#include "dfmpc/worldmodel/checkpoint.h"
#include "tiny_model.h"

namespace dfmpc::planner {
namespace {

// A tiny pendulum model (the built-in task) that claims `levels`.
std::string SaveTinyPendulum(const std::string& name, int levels) {
  worldmodel::ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = worldmodel::TokenLayout{1, 3, /*observation_deltas=*/false};
  info.config = worldmodel::testing::TinyConfig(4);
  info.train_window = 64;
  info.sampling_levels = levels;
  const std::string path = (std::filesystem::path(::testing::TempDir()) / name).string();
  worldmodel::SaveCheckpoint(path, info,
                             worldmodel::Normalizer(torch::zeros({4}), torch::ones({4})),
                             *worldmodel::testing::TinyModel(4));
  return path;
}

TEST(DistilledModelTest, AtLevelsKeepsTheReNoisesShareOfTheRange) {
  PlannerOptions options;
  options.levels = 16;
  options.renoise_levels = 4;
  const PlannerOptions eight = AtLevels(options, 8);
  EXPECT_EQ(eight.levels, 8);
  EXPECT_EQ(eight.renoise_levels, 2);
  EXPECT_EQ(eight.uncertainty, 0.0);  // still K / H
  EXPECT_EQ(AtLevels(options, 4).renoise_levels, 1);
  EXPECT_EQ(AtLevels(options, 2).renoise_levels, 1);  // half a level still re-noises
  options.renoise_levels = 0;
  options.uncertainty = 1.0;
  const PlannerOptions two = AtLevels(options, 2);
  EXPECT_EQ(two.renoise_levels, 0);
  EXPECT_DOUBLE_EQ(two.uncertainty, 0.125);
  EXPECT_THROW(AtLevels(options, 0), std::invalid_argument);
}

TEST(DistilledModelTest, APlannerFromTheFileTakesTheModelsLevels) {
  const Eigen::Vector3d hanging(-1.0, 0.0, 0.0);
  // A student distilled once from the task file's K.
  const PlannerOptions tuned = TunedPlannerOptions("pendulum_swingup");
  const int half = tuned.levels / 2;
  const auto distilled = Planner::FromFile(SaveTinyPendulum("distilled_half.pt", half));
  EXPECT_EQ(distilled->options().levels, half);
  EXPECT_EQ(distilled->options().renoise_levels, AtLevels(tuned, half).renoise_levels);
  distilled->Reset(hanging);
  const int distilled_calls = distilled->last_step().calls;
  EXPECT_TRUE(distilled->Act(hanging).allFinite());

  const auto full = Planner::FromFile(SaveTinyPendulum("undistilled.pt", 0));
  EXPECT_EQ(full->options().levels, tuned.levels);
  full->Reset(hanging);
  // The plan from noise follows a pyramid of about K + H u = 2K rows.
  EXPECT_LE(2 * distilled_calls, full->last_step().calls + 1);
}

TEST(DistilledModelTest, OptionsOfAnotherLevelCountAreRefused) {
  const std::string path = SaveTinyPendulum("distilled_4.pt", 4);
  try {
    Planner::FromFile(path, {{"levels", 16}});
    FAIL() << "a model distilled to K = 4 planned with K = 16";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("distilled to sample with K = 4 levels"),
              std::string::npos)
        << error.what();
  }
  EXPECT_NO_THROW(Planner::FromFile(path, {{"levels", 4}, {"renoise_levels", 1}}));
}

}  // namespace
}  // namespace dfmpc::planner
