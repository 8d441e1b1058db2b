// Links the installed libraries, steps a MuJoCo task and generates a few
// tokens with the exact cache; exits non-zero if anything is off.
#include <dfmpc/envs/env.h>
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
  const bool ok = result.tokens.size(0) == 2 && result.tokens.size(1) == 5 &&
                  result.stats.calls == 4 + 5 - 1 && step.observation.size() == 3;
  std::cout << (ok ? "consumer: ok" : "consumer: unexpected result") << "\n";
  return ok ? 0 : 1;
}
