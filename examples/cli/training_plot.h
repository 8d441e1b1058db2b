// What training commands show and write: progress with the loss, and the
// loss curve as a PNG and a CSV table.
#ifndef DFMPC_EXAMPLES_CLI_TRAINING_PLOT_H_
#define DFMPC_EXAMPLES_CLI_TRAINING_PLOT_H_

#include <functional>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/trainer.h"
#include "progress_bar.h"

namespace dfmpc::cli {

// Updates `bar` (which must outlive it) with the step, the running loss
// and tokens/s.
std::function<void(const worldmodel::TrainProgress&)> ShowTrainingProgress(ProgressBar& bar);

// Train and validation loss against the step, log scale, titled `title`.
void WriteTrainingPlot(const std::string& path, const std::vector<worldmodel::TrainLogRow>& log,
                       const std::string& title = "Diffusion-forcing training loss");
// One row per validation: step, train and validation loss, learning rate,
// tokens/s.
void WriteTrainingCsv(const std::string& path, const std::vector<worldmodel::TrainLogRow>& log);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_TRAINING_PLOT_H_
