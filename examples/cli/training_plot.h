// The loss-curve PNG written during training.
#ifndef DFMPC_EXAMPLES_CLI_TRAINING_PLOT_H_
#define DFMPC_EXAMPLES_CLI_TRAINING_PLOT_H_

#include <string>
#include <vector>

#include "dfmpc/worldmodel/trainer.h"

namespace dfmpc::cli {

// Train and validation loss against the step, log scale.
void WriteTrainingPlot(const std::string& path, const std::vector<worldmodel::TrainLogRow>& log);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TRAINING_PLOT_H_
