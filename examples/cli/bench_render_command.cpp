// dfmpc bench render: offscreen rendering throughput (EGL, no display).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "dfmpc/envs/env.h"
#include "output_path.h"
#include "table.h"
#include "task_option.h"

namespace dfmpc::cli {
namespace {

struct BenchRenderOptions {
  std::vector<std::string> tasks = envs::TaskNames();
  std::vector<int> sizes = {64, 128, 256};
  int frames = 300;
  std::string csv = "bench_render.csv";
};

void RunBenchRender(const BenchRenderOptions& o) {
  if (o.frames < 1) throw std::invalid_argument("--frames must be >= 1");
  Table table({"task", "width", "height", "frames", "ms_per_frame", "fps"});
  for (const std::string& task : o.tasks) {
    auto env = envs::MakeEnv(task);
    env->Reset(0);
    const Eigen::VectorXd action = Eigen::VectorXd::Constant(env->action_spec().size(), 0.5);
    for (int size : o.sizes) {
      for (int i = 0; i < 5; ++i) env->Render(size, size);  // warm-up
      double seconds = 0.0;
      for (int i = 0; i < o.frames; ++i) {
        env->Step(action);  // a new state each frame, not timed
        const auto start = std::chrono::steady_clock::now();
        env->Render(size, size);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      table.AddRow({task, std::to_string(size), std::to_string(size), std::to_string(o.frames),
                    FormatFixed(1000.0 * seconds / o.frames, 3),
                    FormatFixed(o.frames / seconds, 0)});
      std::fprintf(stderr, "  %s %dx%d done\n", task.c_str(), size, size);
    }
  }
  table.Print(std::cout);
  table.WriteCsv(o.csv);
  std::fprintf(stderr, "wrote %s\n", o.csv.c_str());
}

}  // namespace

void AddBenchRenderCommand(CLI::App& bench) {
  auto options = std::make_shared<BenchRenderOptions>();
  CLI::App* cmd = bench.add_subcommand("render", "Offscreen rendering frames per second per task");
  cmd->add_option("--tasks", options->tasks, "tasks to render")
      ->check(TaskNameOrFolder())
      ->capture_default_str();
  cmd->add_option("--sizes", options->sizes, "square image sizes in pixels")->capture_default_str();
  cmd->add_option("--frames", options->frames, "timed frames per task and size")
      ->capture_default_str();
  cmd->add_option("--csv", options->csv, "CSV output path")
      ->capture_default_str()
      ->check(OutputFileInExistingDirectory());
  cmd->callback([options] { RunBenchRender(*options); });
}

}  // namespace dfmpc::cli
