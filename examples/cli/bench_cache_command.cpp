// dfmpc bench cache: open-loop generation cost with and without the exact
// pyramid KV cache, side by side in one run.
#include <ATen/Parallel.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "device_flag.h"
#include "dfmpc/worldmodel/aten_kernels.h"
#include "dfmpc/worldmodel/device.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/transformer.h"
#include "output_path.h"
#include "statistics.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

struct BenchCacheOptions {
  std::vector<int> contexts = {16, 64, 256, 1024};
  int horizon = 32;
  int levels = 16;
  int repeats = 3;
  int threads = 1;
  int token_dim = 4;
  bool aten_kernels = false;  // each CPU row again with ATen's kernels
  std::string device = "cpu";
  std::string csv = "bench_cache.csv";
};

void RunBenchCache(const BenchCacheOptions& o) {
  if (o.repeats < 1 || o.threads < 1) throw std::invalid_argument("--repeats and --threads must be >= 1");
  at::set_num_threads(o.threads);
  torch::manual_seed(0);
  worldmodel::TransformerConfig config;
  config.token_dim = o.token_dim;
  const int longest = *std::max_element(o.contexts.begin(), o.contexts.end());
  config.max_positions = std::max(config.max_positions, longest + o.horizon);
  worldmodel::DfTransformer model(config);
  model->to(worldmodel::ParseDevice(o.device));
  model->eval();
  const worldmodel::NoiseSchedule schedule(config.num_timesteps);
  const worldmodel::Sampler sampler(*model, schedule);
  std::vector<bool> kernel_variants = {false};
  if (o.aten_kernels && o.device == "cpu") kernel_variants.push_back(true);

  std::fprintf(stderr,
               "bench cache: width %d, depth %d, heads %d, d %d, K %d, H %d, device %s, "
               "%d thread(s), median of %d\n",
               config.width, config.depth, config.heads, config.token_dim, o.levels, o.horizon,
               o.device.c_str(), o.threads, o.repeats);
  Table table({"S", "mode", "calls", "token_forwards", "wall_ms", "speedup"});
  for (int s : o.contexts) {
    if (s < 0) throw std::invalid_argument("context lengths must be >= 0");
    const at::Tensor context = torch::randn({1, s, o.token_dim});
    double none_ms = 0.0;
    for (auto mode : {worldmodel::CacheMode::kNone, worldmodel::CacheMode::kExact}) {
      for (const bool aten : kernel_variants) {
        const worldmodel::AtenKernels kernels(aten);
        const std::string label = worldmodel::CacheModeName(mode) + (aten ? " aten" : "");
        worldmodel::SampleOptions options;
        options.num_levels = o.levels;
        options.horizon = o.horizon;
        options.cache_mode = mode;
        worldmodel::SampleStats stats = sampler.Generate(context, 1, options).stats;  // warm-up
        std::vector<double> ms;
        for (int r = 0; r < o.repeats; ++r) {
          const auto start = std::chrono::steady_clock::now();
          stats = sampler.Generate(context, 1, options).stats;
          ms.push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
        }
        const double median = Median(ms);
        if (mode == worldmodel::CacheMode::kNone && !aten) none_ms = median;
        table.AddRow({std::to_string(s), label, std::to_string(stats.calls),
                      std::to_string(stats.token_forwards), FormatFixed(median, 2),
                      FormatFixed(none_ms / median, 2)});
        std::fprintf(stderr, "  S=%d %s done\n", s, label.c_str());
      }
    }
  }
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

}  // namespace

void AddBenchCacheCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchCacheOptions>();
  CLI::App* cmd = bench.add_subcommand(
      "cache", "Generation time without cache (reference) vs the exact pyramid KV cache");
  cmd->add_option("--contexts", options->contexts, "context lengths S")->capture_default_str();
  cmd->add_option("--horizon,-H", options->horizon, "generated tokens")->capture_default_str();
  cmd->add_option("--steps,-K", options->levels, "sampling levels")->capture_default_str();
  cmd->add_option("--repeats", options->repeats, "timed runs per cell (median reported)")
      ->capture_default_str();
  cmd->add_option("--threads", options->threads, "intra-op threads")->capture_default_str();
  cmd->add_option("--token-dim", options->token_dim, "features per token")->capture_default_str();
  cmd->add_flag("--aten-kernels", options->aten_kernels,
                "on the CPU, also each row with ATen's operators instead of the fused kernels: "
                "rotary embeddings in elementwise operations, attention in batched matrix "
                "products, a norm and its modulation as two operators, ATen's bfloat16 "
                "conversions (speed-ups stay against the fused reference)");
  AddDeviceFlag(*cmd, options->device);
  cmd->add_option("--csv", options->csv, "CSV output path")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchCache(*options); });
}

}  // namespace dfmpc::cli
