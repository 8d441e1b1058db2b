// The real side of a video rollout: a ground-truth trajectory of frames and
// the actions between them, from a policy run in the simulator, actions
// replayed in it from a CSV file, or an episode of a dataset with frames.
#ifndef DFMPC_EXAMPLES_PIPELINES_ROLLOUT_TRUTH_H_
#define DFMPC_EXAMPLES_PIPELINES_ROLLOUT_TRUTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dfmpc/envs/dataset.h"

namespace dfmpc::pipelines {

struct TruthTrajectory {
  std::vector<std::vector<std::uint8_t>> frames;  // f_0 .. f_{T-1}
  envs::RowMatrixXf actions;  // [T - 1, action size]: a_t leads from f_t to f_{t+1}
};

struct TruthRequest {
  std::string task;
  int action_repeat = 1;
  int width = 0, height = 0;  // of the frames
  int length = 0;             // T frames
  // "random", "oracle" or "mixed" (a baseline policy in the simulator), a
  // .csv file of actions (one row per control step, replayed in the
  // simulator), or a dataset with frames, FILE.h5 or FILE.h5:EPISODE.
  std::string actions;
  std::uint64_t seed = 0;  // of the episode (and the policy)
};

// Throws std::invalid_argument (or std::runtime_error for unreadable files)
// naming the problem: an unknown source, a CSV file with rows of another
// width than the task's actions, non-numbers or fewer than T - 1 rows; a
// dataset of another task, control rate or frame size, without frames, or
// whose episode is too short or does not exist.
TruthTrajectory MakeTruth(const TruthRequest& request);

// What --actions accepts, for help texts.
std::string ActionSourceHelp();

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_ROLLOUT_TRUTH_H_
