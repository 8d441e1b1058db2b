// Links the installed libraries, steps a MuJoCo task, generates a few
// tokens with the exact cache and plans one action with a (random) model;
// exits non-zero if anything is off.
#include <dfmpc/envs/env.h>
#include <dfmpc/planner/planner.h>
#include <dfmpc/planner/task_cost.h>
#include <dfmpc/worldmodel/checkpoint.h>
#include <dfmpc/worldmodel/sampler.h>
#include <dfmpc/worldmodel/transformer.h>

#include <iostream>

int main() {
  using namespace dfmpc::worldmodel;
  TransformerConfig config;
  config.token_dim = 3;
  config.width = 32;
  config.depth = 1;
  config.heads = 2;
  DfTransformer model(config);
  const NoiseSchedule schedule;
  const Sampler sampler(*model, schedule);
  SampleOptions options;
  options.num_levels = 4;
  options.horizon = 5;
  const SampleResult result = sampler.Generate(at::zeros({1, 6, 3}), 2, options);
  auto env = dfmpc::envs::MakeEnv("pendulum_swingup");
  env->Reset(1);
  const auto step = env->Step(Eigen::VectorXd::Zero(1));

  Checkpoint checkpoint;
  checkpoint.info.task = "pendulum_swingup";
  checkpoint.info.layout = TokenLayout{1, 3, true};
  checkpoint.info.config = config;
  checkpoint.info.config.token_dim = 7;
  checkpoint.info.config.max_positions = checkpoint.info.train_window = 12;
  checkpoint.normalizer = Normalizer(at::zeros({7}), at::ones({7}));
  checkpoint.model = DfTransformer(checkpoint.info.config);
  dfmpc::planner::PlannerOptions planner_options;
  planner_options.horizon = 8;
  planner_options.levels = 4;
  planner_options.candidates = 2;
  dfmpc::planner::Planner planner(checkpoint, dfmpc::planner::MakeTaskCost("pendulum_swingup"),
                                  planner_options);
  planner.Reset(step.observation);
  const Eigen::VectorXd action = planner.Act(step.observation);

  const bool ok = result.tokens.size(0) == 2 && result.tokens.size(1) == 5 &&
                  result.stats.calls == 4 + 5 - 1 && step.observation.size() == 3 &&
                  action.size() == 1 && action.cwiseAbs().maxCoeff() <= 1.0 &&
                  planner.last_step().calls == 4;
  std::cout << (ok ? "consumer: ok" : "consumer: unexpected result") << "\n";
  return ok ? 0 : 1;
}
