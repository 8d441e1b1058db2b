#include "perturbation_flags.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <stdexcept>

namespace dfmpc::cli {
namespace {

envs::PerturbationSpec ParseFlag(const char* flag, const std::string& text) {
  try {
    return envs::ParsePerturbation(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string(flag) + ": " + e.what());
  }
}

}  // namespace

void AddPerturbationFlags(CLI::App& command, PerturbationFlags& flags) {
  command.add_option("--perturb", flags.perturb,
                     "fixed perturbations of the task, name=value,..., e.g. "
                     "obs_noise=0.03,damping=1.5 (names below)");
  command.add_option("--randomize", flags.randomize,
                     "perturbations drawn per episode from ranges, name=low:high,..., e.g. "
                     "mass=0.7:1.3,delay=0:2 (uniform; the delay over whole steps)");
  command.footer("Perturbations (--perturb, --randomize; a parameter in only one of them):\n" +
                 envs::DescribePerturbationParameters() +
                 "Observation features' scales are listed in envs/include/dfmpc/envs/env.h.");
}

envs::PerturbationSpec PerturbationFromFlags(const PerturbationFlags& flags) {
  const envs::PerturbationSpec fixed = ParseFlag("--perturb", flags.perturb);
  const envs::PerturbationSpec randomized = ParseFlag("--randomize", flags.randomize);
  try {
    return envs::MergePerturbations(fixed, randomized);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("--perturb, --randomize: ") + e.what());
  }
}

std::vector<std::string> PerturbationCells(const envs::Perturbation& perturbation) {
  std::vector<std::string> cells;
  for (double value : envs::PerturbationValues(perturbation)) {
    char cell[32];
    std::snprintf(cell, sizeof(cell), "%.6g", value);
    cells.emplace_back(cell);
  }
  return cells;
}

}  // namespace dfmpc::cli
