// The optimiser's flags, the same names and meanings on every command that
// trains a model (train, distill, train-mlp, train-value, train-frames).
#ifndef DFMPC_EXAMPLES_CLI_OPTIMIZER_FLAGS_H_
#define DFMPC_EXAMPLES_CLI_OPTIMIZER_FLAGS_H_

#include <string>

#include "dfmpc/worldmodel/optimizer_options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

// Adds --steps, --batch, --lr, --min-lr-ratio, --warmup, --weight-decay,
// --grad-clip and --seed, set into `options` (which holds the defaults).
// `batch_items` names what a batch holds ("windows"), `seed_draws` what the
// seed draws ("weights and data order").
void AddOptimizerFlags(CLI::App& cmd, worldmodel::OptimizerOptions& options,
                       const std::string& batch_items, const std::string& seed_draws);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_OPTIMIZER_FLAGS_H_
