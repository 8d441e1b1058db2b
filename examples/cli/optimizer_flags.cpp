#include "optimizer_flags.h"

#include <CLI/CLI.hpp>

namespace dfmpc::cli {

void AddOptimizerFlags(CLI::App& cmd, worldmodel::OptimizerOptions& options,
                       const std::string& batch_items, const std::string& seed_draws) {
  cmd.add_option("--steps", options.steps, "optimizer steps")->capture_default_str();
  cmd.add_option("--batch", options.batch_size, batch_items + " per step")->capture_default_str();
  cmd.add_option("--lr", options.learning_rate,
                 "peak learning rate of AdamW (after the warm-up; then a cosine decay)")
      ->capture_default_str();
  cmd.add_option("--min-lr-ratio", options.min_learning_rate_ratio,
                 "the cosine decays the rate to this fraction of --lr at the last step")
      ->capture_default_str();
  cmd.add_option("--warmup", options.warmup_steps, "steps of linear warm-up to --lr")
      ->capture_default_str();
  cmd.add_option("--weight-decay", options.weight_decay, "AdamW weight decay")
      ->capture_default_str();
  cmd.add_option("--grad-clip", options.grad_clip, "max global gradient norm (0: no clipping)")
      ->capture_default_str();
  cmd.add_option("--seed", options.seed, "seed of " + seed_draws)->capture_default_str();
}

}  // namespace dfmpc::cli
