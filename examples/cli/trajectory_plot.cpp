#include "trajectory_plot.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "plot/plot.h"

namespace dfmpc::cli {
namespace {

constexpr double kDegrees = 180.0 / 3.14159265358979323846;

// A scalar read from one observation row.
struct Feature {
  std::string name;
  std::function<double(const Eigen::VectorXd&)> read;
};

Feature Angle(const std::string& name, int cos_index, int sin_index) {
  return {name, [=](const Eigen::VectorXd& o) {
            return std::abs(std::atan2(o(sin_index), o(cos_index))) * kDegrees;
          }};
}

// Observation panels beyond these would make the PNG taller than a plot
// may be (the quadruped has 43 features): the task file's first ones, which
// by the built-in tasks' convention are the body's pose and speed.
constexpr int kMaxFeaturePanels = 24;

// What a person wants to see of a task's state.
std::vector<Feature> KeyFeatures(const std::string& task, int observation_dim) {
  if (task == "pendulum_swingup" || task == "pendulum_swingup_novel") {
    return {Angle("|angle| from upright (deg)", 0, 1)};
  }
  if (task == "cartpole_swingup" || task == "cartpole_balance") {
    return {Angle("|pole angle| from upright (deg)", 1, 2),
            {"cart position (m)", [](const Eigen::VectorXd& o) { return o(0); }}};
  }
  std::vector<Feature> features;
  for (int i = 0; i < std::min(observation_dim, kMaxFeaturePanels); ++i) {
    features.push_back(
        {"observation " + std::to_string(i), [i](const Eigen::VectorXd& o) { return o(i); }});
  }
  return features;
}

}  // namespace

void WriteTrajectoryPlot(const std::string& path, const std::string& task, double control_dt,
                         const std::vector<LabeledEpisode>& episodes) {
  const int observation_dim = static_cast<int>(episodes.front().episode->observations.cols());
  const int action_dim = static_cast<int>(episodes.front().episode->actions.cols());
  std::vector<plot::Panel> panels;
  for (const Feature& feature : KeyFeatures(task, observation_dim)) {
    plot::Panel panel{task + ": " + feature.name, "time (s)", feature.name, false, {}};
    for (const LabeledEpisode& run : episodes) {
      plot::Series series{run.label, {}, {}};
      for (int t = 0; t < run.episode->observations.rows(); ++t) {
        series.x.push_back(t * control_dt);
        series.y.push_back(feature.read(run.episode->observations.row(t).transpose()));
      }
      panel.series.push_back(std::move(series));
    }
    panels.push_back(std::move(panel));
  }
  plot::Panel actions{"actions", "time (s)", "action", false, {}};
  plot::Panel returns{"cumulative return", "time (s)", "return", false, {}};
  for (const LabeledEpisode& run : episodes) {
    for (int a = 0; a < action_dim; ++a) {
      plot::Series series{
          action_dim == 1 ? run.label : run.label + " a" + std::to_string(a), {}, {}};
      for (int t = 0; t < run.episode->actions.rows(); ++t) {
        series.x.push_back(t * control_dt);
        series.y.push_back(run.episode->actions(t, a));
      }
      actions.series.push_back(std::move(series));
    }
    plot::Series cumulative{run.label, {}, {}};
    double sum = 0.0;
    for (int t = 0; t < run.episode->rewards.size(); ++t) {
      sum += run.episode->rewards(t);
      cumulative.x.push_back((t + 1) * control_dt);
      cumulative.y.push_back(sum);
    }
    returns.series.push_back(std::move(cumulative));
  }
  panels.push_back(std::move(actions));
  panels.push_back(std::move(returns));
  plot::WritePlotPng(path, panels, 900, 260);
}

}  // namespace dfmpc::cli
