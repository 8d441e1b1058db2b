// The oracle: sampling-based MPC on the true MuJoCo model ("predictive
// sampling", as in MuJoCo MPC). Each control step it perturbs the nominal
// action spline with Gaussian noise, rolls every candidate out on a copy of
// the simulation, keeps the one with the highest summed shaped reward, and
// shifts it one step forward to warm-start the next control step.
#ifndef DFMPC_ENVS_PREDICTIVE_SAMPLING_H_
#define DFMPC_ENVS_PREDICTIVE_SAMPLING_H_

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dfmpc/envs/env.h"
#include "dfmpc/envs/policy.h"

namespace dfmpc::envs {

enum class Interpolation { kZeroOrder, kLinear };

struct PredictiveSamplingOptions {
  int horizon = 50;        // control steps per rollout
  int num_knots = 6;       // spline knots spanning the horizon (>= 2)
  int num_samples = 32;    // candidates per control step, the nominal included
  double noise_std = 0.3;  // std of the knot perturbation (actions are in [-1, 1])
  Interpolation interpolation = Interpolation::kLinear;
  int num_threads = 1;     // rollouts run on this many threads
  std::uint64_t seed = 0;
};

// The task file's [oracle] settings (its look-ahead `horizon` in physics
// steps, `knots`, `samples`, `noise_std`; the defaults above where absent).
// The look-ahead is a span of simulated time: with `action_repeat` physics
// steps per control step the horizon shrinks to round(horizon /
// action_repeat) control steps (knots capped at that). `task`: a name or a
// task folder.
PredictiveSamplingOptions OracleOptions(const std::string& task, int action_repeat = 1);
PredictiveSamplingOptions OracleOptions(const task::TaskSpec& task, int action_repeat = 1);

class PredictiveSamplingPolicy final : public Policy {
 public:
  // `env` is the environment being controlled; it must outlive the policy.
  PredictiveSamplingPolicy(const Env& env, const PredictiveSamplingOptions& options);
  ~PredictiveSamplingPolicy() override;

  void Reset(const Eigen::VectorXd& observation) override;
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;

  // Summed shaped reward of the plan chosen by the last Act.
  double best_value() const { return best_value_; }

 private:
  double Rollout(Env* sim, const Eigen::VectorXd& start, const Eigen::MatrixXd& knots);
  Eigen::VectorXd ActionAt(const Eigen::MatrixXd& knots, double step) const;

  const Env& env_;
  PredictiveSamplingOptions options_;
  std::unique_ptr<Rng> rng_;
  std::vector<std::unique_ptr<Env>> sims_;  // one per thread
  Eigen::MatrixXd nominal_;                 // num_knots x action size
  std::vector<Eigen::MatrixXd> candidates_;
  std::vector<double> values_;
  double best_value_ = 0.0;
};

// Oracle actions with Gaussian action noise, interrupted by segments of
// uniformly random actions: diverse yet competent data for world models.
struct MixedOptions {
  double action_noise_std = 0.2;
  double random_segment_probability = 0.02;  // chance per step to start one
  int min_segment_length = 5;
  int max_segment_length = 30;
};

class MixedPolicy final : public Policy {
 public:
  MixedPolicy(const Env& env, const PredictiveSamplingOptions& oracle, const MixedOptions& mixed);
  ~MixedPolicy() override;

  void Reset(const Eigen::VectorXd& observation) override;
  Eigen::VectorXd Act(const Eigen::VectorXd& observation) override;

 private:
  PredictiveSamplingPolicy oracle_;
  MixedOptions options_;
  BoxSpec action_spec_;
  std::unique_ptr<Rng> rng_;
  int random_steps_left_ = 0;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_PREDICTIVE_SAMPLING_H_
