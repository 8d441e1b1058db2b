// A controller with a fixed period: an AsyncPlanner plans on its own
// thread, and Step never waits longer than max_wait for it. The "robot" is
// the simulated pendulum. Arguments: the model file, the control steps.
#include <dfmpc/envs/env.h>
#include <dfmpc/planner/async_planner.h>
#include <dfmpc/planner/planner.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

int main(int argc, char** argv) {
  namespace planner = dfmpc::planner;
  using Clock = std::chrono::steady_clock;
  const std::string model = argc > 1 ? argv[1] : "examples/models/pendulum_swingup.pt";

  // The options the model's task file tunes, with seed 3 and one LibTorch thread.
  auto model_planner = planner::Planner::FromFile(model, {{"seed", 3}, {"threads", 1}});

  // The robot, at the model's control rate.
  dfmpc::envs::EnvOptions env_options;
  env_options.action_repeat = model_planner->action_repeat();
  auto robot = dfmpc::envs::MakeEnv("pendulum_swingup", env_options);
  const int steps = argc > 2 ? std::stoi(argv[2]) : robot->episode_length();
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(robot->control_timestep()));

  planner::AsyncPlannerOptions async;
  async.max_wait = std::chrono::milliseconds(10);  // then Step serves the shifted plan
  planner::AsyncPlanner controller(std::move(model_planner), async);

  Eigen::VectorXd observation = robot->Reset(/*seed=*/0);
  controller.Reset(observation);  // blocks for the first plan: before the loop
  double episode_return = 0.0;
  Clock::time_point next = Clock::now();
  for (int step = 0; step < steps; ++step) {
    const Eigen::VectorXd action = controller.Step(observation);  // waits <= max_wait
    const dfmpc::envs::StepResult result = robot->Step(action);
    observation = result.observation;
    episode_return += result.reward;
    next += period;
    std::this_thread::sleep_until(next);
  }
  const planner::AsyncStats stats = controller.stats();
  std::printf("return %.1f; %lld of %lld steps missed; %lld planner errors\n", episode_return,
              static_cast<long long>(stats.misses), static_cast<long long>(stats.steps),
              static_cast<long long>(stats.planner_errors));
}
