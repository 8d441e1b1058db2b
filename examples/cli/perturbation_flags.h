// The --perturb and --randomize flags that collect, eval and control share.
#ifndef DFMPC_EXAMPLES_CLI_PERTURBATION_FLAGS_H_
#define DFMPC_EXAMPLES_CLI_PERTURBATION_FLAGS_H_

#include <string>
#include <vector>

#include "dfmpc/envs/perturbation.h"

namespace CLI {
class App;
}  // namespace CLI

namespace dfmpc::cli {

struct PerturbationFlags {
  std::string perturb;    // fixed values: "name=value,..."
  std::string randomize;  // ranges sampled per episode: "name=low:high,..."
};

// Adds both flags to `command`, and a help footer explaining the syntax and
// the parameters.
void AddPerturbationFlags(CLI::App& command, PerturbationFlags& flags);

// The spec both flags give together. Throws std::invalid_argument naming
// the flag and the parameter.
envs::PerturbationSpec PerturbationFromFlags(const PerturbationFlags& flags);

// One table cell per parameter (envs::PerturbationNames() order).
std::vector<std::string> PerturbationCells(const envs::Perturbation& perturbation);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_PERTURBATION_FLAGS_H_
