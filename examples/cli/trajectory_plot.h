// A PNG of closed-loop episodes over time: the task's key state (pendulum
// and pole angles in degrees, else the first 24 observation features), the
// actions and the cumulative return, one line per episode.
#ifndef DFMPC_EXAMPLES_CLI_TRAJECTORY_PLOT_H_
#define DFMPC_EXAMPLES_CLI_TRAJECTORY_PLOT_H_

#include <string>
#include <vector>

#include "dfmpc/envs/episode.h"

namespace dfmpc::cli {

struct LabeledEpisode {
  std::string label;  // e.g. "dfmpc warm" or "random"
  const envs::Episode* episode;
};

// Throws std::runtime_error when the plot cannot be written.
void WriteTrajectoryPlot(const std::string& path, const std::string& task, double control_dt,
                         const std::vector<LabeledEpisode>& episodes);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TRAJECTORY_PLOT_H_
