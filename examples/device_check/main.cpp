// dfmpc_device_check: the GPU table of scripts/gpu_check.sh. Warm-step
// latency (eager and CUDA graphs, N = 8 .. 1024), training tokens/s (fp32
// and bf16, the shipped and a 4x wider model) and video rollout frames/s,
// each beside the same machine's CPU, in one run. Needs only the world model
// and the planner, so it builds where MuJoCo does not.
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "planner_latency.h"
#include "rollout_throughput.h"
#include "statistics.h"
#include "table.h"
#include "training_throughput.h"

namespace dfmpc::device_check {
namespace {

using cli::FormatFixed;
using cli::Percentile;
using cli::Table;

struct Options {
  std::vector<std::string> devices;
  std::vector<int> candidates = {8, 64, 256, 1024};
  int steps = 200;
  int train_steps = 40;
  int horizon = 256;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string models = DFMPC_SHIPPED_MODELS_DIR;
  std::string csv_prefix = "device_check";
  bool quick = false;
};

void Write(const Table& table, const std::string& title, const std::string& path) {
  std::printf("\n%s\n", title.c_str());
  std::fflush(stdout);
  table.Print(std::cout);
  std::cout.flush();
  table.WriteCsv(path);
}

void PlannerTable(const Options& o) {
  Table table({"device", "N", "mode", "p50_ms", "p99_ms", "graph_replays_per_step",
               "max_action_difference", "p50_vs_cpu"});
  for (int n : o.candidates) {
    double cpu_p50 = 0.0;
    for (const std::string& device : o.devices) {
      const bool gpu = device != "cpu";
      LatencyResult eager;
      for (bool graphs : gpu ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
        std::fprintf(stderr, "device check: warm steps, %s, N %d%s\n", device.c_str(), n,
                     graphs ? ", CUDA graphs" : "");
        const LatencyResult r =
            MeasureWarmSteps({o.models + "/pendulum_swingup.pt", device, n, graphs, o.steps});
        const double p50 = Percentile(r.latencies_ms, 50);
        if (!gpu) cpu_p50 = p50;
        std::string difference = "-";
        if (graphs) {
          double largest = 0.0;
          for (size_t i = 0; i < r.actions.size(); ++i) {
            largest = std::max(largest, (r.actions[i] - eager.actions[i]).cwiseAbs().maxCoeff());
          }
          difference = FormatFixed(largest, 7);
        } else {
          eager = r;
        }
        table.AddRow({device, std::to_string(n), graphs ? "warm r=1 graphs" : "warm r=1",
                      FormatFixed(p50, 3), FormatFixed(Percentile(r.latencies_ms, 99), 3),
                      FormatFixed(r.graph_replays_per_step, 2), difference,
                      cpu_p50 > 0 ? FormatFixed(cpu_p50 / p50, 2) : "-"});
      }
    }
  }
  Write(table, "Warm step (shipped pendulum model, H = 32, K = 16, r = 1)",
        o.csv_prefix + "_planner.csv");
}

void TrainingTable(const Options& o) {
  const worldmodel::TransformerConfig shipped =
      worldmodel::LoadCheckpoint(o.models + "/pendulum_swingup.pt").info.config;
  worldmodel::TransformerConfig wide = shipped;
  wide.width *= 4;
  struct Row {
    std::string device, model;
    worldmodel::TransformerConfig config;
    int batch;
    bool bf16;
    int steps;
  };
  const int batch = o.quick ? 4 : 32, big_batch = o.quick ? 8 : 256;
  std::vector<Row> rows;
  for (const std::string& device : o.devices) {
    rows.push_back({device, "shipped", shipped, batch, false, o.train_steps});
    if (device == "cpu") continue;
    rows.push_back({device, "shipped", shipped, big_batch, false, o.train_steps});
    rows.push_back({device, "shipped", shipped, big_batch, true, o.train_steps});
    rows.push_back({device, "4x wide", wide, big_batch, false, o.train_steps});
    rows.push_back({device, "4x wide", wide, big_batch, true, o.train_steps});
  }
  Table table({"device", "model", "parameters", "batch", "precision", "tokens_per_s",
               "validation_loss", "vs_cpu"});
  double cpu_rate = 0.0;
  for (const Row& row : rows) {
    std::fprintf(stderr, "device check: training, %s, %s, batch %d%s\n", row.device.c_str(),
                 row.model.c_str(), row.batch, row.bf16 ? ", bf16" : "");
    const TrainingResult r = MeasureTraining(
        {row.config, row.device, row.bf16, row.batch, o.quick ? 16 : 64, row.steps});
    if (row.device == "cpu") cpu_rate = r.tokens_per_second;
    table.AddRow({row.device, row.model, std::to_string(r.parameters), std::to_string(row.batch),
                  row.bf16 ? "bf16 autocast" : "fp32", FormatFixed(r.tokens_per_second, 0),
                  FormatFixed(r.validation_loss, 4),
                  cpu_rate > 0 ? FormatFixed(r.tokens_per_second / cpu_rate, 1) : "-"});
  }
  Write(table,
        "Training (synthetic oscillator trajectories, window " +
            std::to_string(o.quick ? 16 : 64) + ", " + std::to_string(o.train_steps) + " steps)",
        o.csv_prefix + "_training.csv");
}

void RolloutTable(const Options& o) {
  Table table({"device", "mode", "frames_per_s", "graph_replays", "vs_cpu"});
  double cpu_rate = 0.0;
  for (const std::string& device : o.devices) {
    const bool gpu = device != "cpu";
    for (bool graphs : gpu ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
      std::fprintf(stderr, "device check: rollout, %s%s\n", device.c_str(),
                   graphs ? ", CUDA graphs" : "");
      const RolloutResult r = MeasureRollout(
          {o.models + "/pendulum_swingup_video.pt", device, graphs, 16, o.horizon});
      if (!gpu) cpu_rate = r.frames_per_second;
      table.AddRow({device, graphs ? "exact cache, graphs" : "exact cache",
                    FormatFixed(r.frames_per_second, 1), std::to_string(r.graph_replays),
                    cpu_rate > 0 ? FormatFixed(r.frames_per_second / cpu_rate, 1) : "-"});
    }
  }
  Write(table,
        "Open-loop rollout (shipped pendulum video model, 16 context frames, " +
            std::to_string(o.horizon) + " frames decoded)",
        o.csv_prefix + "_rollout.csv");
}

}  // namespace
}  // namespace dfmpc::device_check

int main(int argc, char** argv) {
  using dfmpc::device_check::Options;
  Options o;
  CLI::App app(
      "The device table: warm-step latency, training throughput and rollout speed on each "
      "device, beside the CPU");
  app.add_option("--devices", o.devices, "devices to measure (default: cpu, and cuda if present)");
  app.add_option("--candidates", o.candidates, "candidate counts N of the warm step")
      ->capture_default_str();
  app.add_option("--steps", o.steps, "timed warm steps per row")->capture_default_str();
  app.add_option("--train-steps", o.train_steps, "training steps per row (5 untimed)")
      ->capture_default_str();
  app.add_option("--horizon", o.horizon, "rollout frames")->capture_default_str();
  app.add_option("--threads", o.threads, "CPU intra-op threads")->capture_default_str();
  app.add_option("--models", o.models, "folder of the shipped models")->capture_default_str();
  app.add_option("--csv-prefix", o.csv_prefix, "CSV files: PREFIX_planner.csv, ...")
      ->capture_default_str();
  app.add_flag("--quick", o.quick, "tiny sizes: a smoke test of every path");
  CLI11_PARSE(app, argc, argv);
  try {
    if (o.steps < 1 || o.train_steps < 6 || o.horizon < 1 || o.threads < 1) {
      throw std::invalid_argument(
          "--steps, --horizon and --threads must be >= 1, --train-steps >= 6");
    }
    if (o.devices.empty()) {
      o.devices.push_back("cpu");
      if (torch::cuda::is_available()) o.devices.push_back("cuda");
    }
    at::set_num_threads(o.threads);
    std::printf("device check: devices");
    for (const std::string& device : o.devices) std::printf(" %s", device.c_str());
    std::printf(", %d CPU thread(s)\n", o.threads);
    std::fflush(stdout);
    dfmpc::device_check::PlannerTable(o);
    dfmpc::device_check::TrainingTable(o);
    dfmpc::device_check::RolloutTable(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dfmpc_device_check: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
