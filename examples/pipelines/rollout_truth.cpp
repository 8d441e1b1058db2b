#include "rollout_truth.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/episode.h"
#include "dfmpc/envs/policy.h"

namespace dfmpc::pipelines {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Parses one CSV line of numbers; false when a field is not a finite number.
bool ParseNumbers(const std::string& line, std::vector<double>& values) {
  values.clear();
  std::stringstream fields(line);
  for (std::string field; std::getline(fields, field, ',');) {
    const char* begin = field.c_str();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(begin, &end);
    while (end != nullptr && (*end == ' ' || *end == '\r' || *end == '\t')) ++end;
    if (end == begin || *end != '\0' || errno == ERANGE || !std::isfinite(value)) return false;
    values.push_back(value);
  }
  return !values.empty();
}

// Rows of actions; the first line may be a header.
envs::RowMatrixXf ReadActionCsv(const std::string& path, int action_size, int rows_needed) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read action file '" + path + "'");
  std::vector<std::vector<double>> rows;
  std::vector<double> values;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty() || line == "\r") continue;
    if (!ParseNumbers(line, values)) {
      if (line_number == 1) continue;  // a header
      throw std::invalid_argument("action file '" + path + "' line " + std::to_string(line_number) +
                                  ": not a row of finite numbers");
    }
    if (static_cast<int>(values.size()) != action_size) {
      throw std::invalid_argument("action file '" + path + "' line " + std::to_string(line_number) +
                                  " has " + std::to_string(values.size()) +
                                  " columns; the task's actions have " +
                                  std::to_string(action_size));
    }
    rows.push_back(values);
  }
  if (static_cast<int>(rows.size()) < rows_needed) {
    throw std::invalid_argument(
        "action file '" + path + "' has " + std::to_string(rows.size()) +
        " rows; --context + --horizon - 1 = " + std::to_string(rows_needed) + " are needed");
  }
  envs::RowMatrixXf actions(rows_needed, action_size);
  for (int r = 0; r < rows_needed; ++r) {
    for (int c = 0; c < action_size; ++c) actions(r, c) = static_cast<float>(rows[r][c]);
  }
  return actions;
}

// Replays given actions, repeating the last one past their end.
class ReplayPolicy : public envs::Policy {
 public:
  explicit ReplayPolicy(const envs::RowMatrixXf& actions) : actions_(actions) {}
  void Reset(const Eigen::VectorXd&) override { step_ = 0; }
  Eigen::VectorXd Act(const Eigen::VectorXd&) override {
    const int row = std::min<int>(step_++, static_cast<int>(actions_.rows()) - 1);
    return actions_.row(row).transpose().cast<double>();
  }

 private:
  const envs::RowMatrixXf& actions_;
  int step_ = 0;
};

TruthTrajectory FromSimulator(const TruthRequest& request, const envs::RowMatrixXf* replay) {
  envs::EnvOptions env_options;
  env_options.action_repeat = request.action_repeat;
  env_options.episode_physics_steps = request.length * request.action_repeat;
  auto env = envs::MakeEnv(request.task, env_options);
  std::unique_ptr<envs::Policy> policy =
      replay != nullptr ? std::make_unique<ReplayPolicy>(*replay)
                        : envs::MakeBaselinePolicy(request.actions, *env, request.seed);
  envs::RunOptions run;
  run.frame_width = request.width;
  run.frame_height = request.height;
  envs::Episode episode = envs::RunEpisode(*env, *policy, request.seed, run);
  if (episode.length() < request.length) {
    throw std::runtime_error("the episode ended after " + std::to_string(episode.length()) +
                             " steps, before the " + std::to_string(request.length) + " needed");
  }
  TruthTrajectory truth;
  truth.frames = std::move(episode.frames);
  truth.actions = episode.actions.topRows(request.length - 1).cast<float>();
  return truth;
}

TruthTrajectory FromDataset(const TruthRequest& request) {
  std::string path = request.actions;
  int episode = 0;
  const std::size_t colon = path.rfind(':');
  if (colon != std::string::npos && EndsWith(path.substr(0, colon), ".h5")) {
    const std::string number = path.substr(colon + 1);
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("--actions " + path + ": the episode must be a number");
    }
    episode = std::stoi(number);
    path = path.substr(0, colon);
  }
  const envs::Dataset data = envs::ReadDataset(path);
  const envs::DatasetInfo& info = data.info;
  const std::string name = "dataset " + path;
  if (info.task != request.task || info.action_repeat != request.action_repeat) {
    throw std::invalid_argument(name + " is " + info.task + " at " +
                                std::to_string(info.action_repeat) +
                                " physics step(s) per control step; the model is " + request.task +
                                " at " + std::to_string(request.action_repeat));
  }
  if (info.frame_width == 0) {
    throw std::invalid_argument(name + " has no frames (collect it with --frames)");
  }
  if (info.frame_width != request.width || info.frame_height != request.height) {
    throw std::invalid_argument(name + " has " + std::to_string(info.frame_width) + "x" +
                                std::to_string(info.frame_height) + " frames, the model " +
                                std::to_string(request.width) + "x" +
                                std::to_string(request.height));
  }
  if (episode >= data.num_episodes()) {
    throw std::invalid_argument(name + " has " + std::to_string(data.num_episodes()) +
                                " episodes; there is no episode " + std::to_string(episode));
  }
  if (data.episode_lengths[episode] < request.length) {
    throw std::invalid_argument(name + " episode " + std::to_string(episode) + " has " +
                                std::to_string(data.episode_lengths[episode]) + " frames; " +
                                std::to_string(request.length) + " are needed");
  }
  const std::size_t bytes = static_cast<std::size_t>(request.width) * request.height * 3;
  const int64_t start = data.episode_starts[episode];
  TruthTrajectory truth;
  for (int t = 0; t < request.length; ++t) {
    const auto first = data.frames.begin() + static_cast<std::ptrdiff_t>((start + t) * bytes);
    truth.frames.emplace_back(first, first + static_cast<std::ptrdiff_t>(bytes));
  }
  truth.actions = data.actions.middleRows(start, request.length - 1);
  return truth;
}

}  // namespace

TruthTrajectory MakeTruth(const TruthRequest& request) {
  if (request.length < 2) throw std::invalid_argument("a rollout needs at least 2 frames");
  const std::vector<std::string> policies = envs::BaselinePolicyNames();
  if (std::find(policies.begin(), policies.end(), request.actions) != policies.end()) {
    return FromSimulator(request, nullptr);
  }
  if (EndsWith(request.actions, ".csv")) {
    const int action_size = envs::MakeEnv(request.task)->action_spec().size();
    const envs::RowMatrixXf actions =
        ReadActionCsv(request.actions, action_size, request.length - 1);
    return FromSimulator(request, &actions);
  }
  if (EndsWith(request.actions, ".h5") || request.actions.find(".h5:") != std::string::npos) {
    return FromDataset(request);
  }
  throw std::invalid_argument("--actions '" + request.actions + "': " + ActionSourceHelp());
}

std::string ActionSourceHelp() {
  return "random, oracle or mixed (a baseline policy in the simulator), FILE.csv (actions, one "
         "row per control step, replayed in the simulator) or FILE.h5[:EPISODE] (an episode of "
         "a dataset with frames)";
}

}  // namespace dfmpc::pipelines
