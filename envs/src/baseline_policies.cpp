#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/envs/policy.h"
#include "dfmpc/envs/predictive_sampling.h"

namespace dfmpc::envs {

std::vector<std::string> BaselinePolicyNames() { return {"random", "oracle", "mixed"}; }

std::unique_ptr<Policy> MakeBaselinePolicy(const std::string& name, const Env& env,
                                           std::uint64_t seed, int num_threads) {
  PredictiveSamplingOptions oracle = OracleOptions(env.task(), env.action_repeat());
  oracle.seed = seed;
  oracle.num_threads = num_threads;
  if (name == "random") return std::make_unique<RandomPolicy>(env.action_spec(), seed);
  if (name == "oracle") return std::make_unique<PredictiveSamplingPolicy>(env, oracle);
  if (name == "mixed") return std::make_unique<MixedPolicy>(env, oracle, MixedOptions());
  throw std::invalid_argument("unknown policy '" + name + "' (known: random, oracle, mixed)");
}

}  // namespace dfmpc::envs
