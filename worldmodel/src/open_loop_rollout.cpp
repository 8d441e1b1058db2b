#include "dfmpc/worldmodel/open_loop_rollout.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "dfmpc/worldmodel/forward_graphs.h"
#include "dfmpc/worldmodel/kv_cache.h"
#include "dfmpc/worldmodel/observation_chain.h"
#include "dfmpc/worldmodel/transformer.h"
#include "generation.h"

namespace dfmpc::worldmodel {
namespace {

void Require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("OpenLoopRollout: " + message);
}

// Chunks draw their noise from seeds of their own, so chunk c's numbers do
// not depend on how many earlier chunks there were of which size.
uint64_t ChunkSeed(uint64_t seed, int64_t chunk) {
  return seed ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(chunk + 1));
}

}  // namespace

OpenLoopRollout::OpenLoopRollout(DfTransformerImpl& model, const NoiseSchedule& schedule,
                                 int action_dim, const RolloutOptions& options)
    : model_(model), schedule_(schedule), action_dim_(action_dim), options_(options) {
  const TransformerConfig& config = model.config();
  Require(config.num_timesteps == schedule.num_timesteps(),
          "model trained for " + std::to_string(config.num_timesteps) + " timesteps, schedule has " +
              std::to_string(schedule.num_timesteps()));
  Require(action_dim >= 0 && action_dim < config.token_dim,
          "action features must be in [0, token dimension)");
  Require(options.chunk >= 1 && options.chunk < config.max_positions,
          "chunk must be in [1, max_positions " + std::to_string(config.max_positions) +
              "), got " + std::to_string(options.chunk));
  if (options_.history == 0) options_.history = config.max_positions - options.chunk;
  Require(options_.history >= 1 && options_.history + options.chunk <= config.max_positions,
          "history " + std::to_string(options_.history) + " plus chunk " +
              std::to_string(options.chunk) + " exceeds the model's max_positions " +
              std::to_string(config.max_positions));
  Require(options.num_sinks >= 0 && options.num_sinks < options_.history,
          "sinks must be in [0, history)");
  Require(options.eta >= 0.0, "eta must be >= 0");
  Require(options.chain == nullptr || options.chain->token_dim() == config.token_dim,
          "observation chain is for another token dimension");
  // Validates K, the chunk and u against the schedule before any model work.
  MakeSchedulingMatrix(options.schedule, options.num_levels, options.chunk, options.uncertainty);
  schedule.LevelTimestep(0, options.num_levels);
  if (options.cache_mode == CacheMode::kExact) {
    KvCacheOptions cache = model.CacheOptions();
    cache.capacity = options_.history;
    cache.num_sinks = options.num_sinks;
    cache.evict = true;
    cache.scratch_capacity = options.chunk;
    cache_ = std::make_unique<KvCache>(cache);
    if (options.cuda_graphs && cache.device.is_cuda()) {
      graphs_ = std::make_unique<ForwardGraphs>(model);
    }
  }
}

OpenLoopRollout::~OpenLoopRollout() = default;

void OpenLoopRollout::Reset(const at::Tensor& context) {
  const int64_t dim = model_.config().token_dim;
  Require(context.defined() && context.dim() == 2 && context.size(0) >= 1 &&
              context.size(1) == dim,
          "context must be [S >= 1, " + std::to_string(dim) + "]");
  Require(at::isfinite(context).all().item<bool>(), "context contains NaN or infinite values");
  c10::InferenceMode inference;
  // A copy even where no conversion is needed: the last token is kept for the
  // chain, and must not change with the caller's tensor.
  const at::Tensor tokens =
      context.to(model_.CacheOptions().device, at::kFloat, /*non_blocking=*/false, /*copy=*/true)
          .unsqueeze(0);
  started_ = false;
  generated_ = 0;
  chunks_ = 0;
  if (cache_) {
    cache_->Clear();
  } else {
    sinks_ = tokens.narrow(1, 0, 0);
    ring_ = sinks_;
  }
  // In pieces of at most a chunk, so no forward attends beyond
  // max_positions however long the context.
  for (int64_t begin = 0; begin < tokens.size(1); begin += options_.chunk) {
    Remember(tokens.narrow(1, begin, std::min<int64_t>(options_.chunk, tokens.size(1) - begin)));
  }
  started_ = true;
}

at::Tensor OpenLoopRollout::Next(const at::Tensor& actions) {
  if (!started_) throw std::logic_error("OpenLoopRollout: call Reset before Next");
  const int64_t dim = model_.config().token_dim;
  Require(actions.defined() && actions.dim() == 2 && actions.size(0) >= 1 &&
              actions.size(0) <= options_.chunk && actions.size(1) == action_dim_,
          "actions must be [1.." + std::to_string(options_.chunk) + ", " +
              std::to_string(action_dim_) + "]");
  Require(at::isfinite(actions).all().item<bool>(), "actions contain NaN or infinite values");
  c10::InferenceMode inference;
  const at::Device device = model_.CacheOptions().device;
  const int n = static_cast<int>(actions.size(0));

  SampleOptions sample;
  sample.schedule = options_.schedule;
  sample.num_levels = options_.num_levels;
  sample.horizon = n;
  sample.uncertainty = options_.uncertainty;
  sample.eta = options_.eta;
  sample.cache_mode = options_.cache_mode;
  sample.prediction = options_.prediction;
  sample.seed = ChunkSeed(options_.seed, chunks_);
  sample.chain = options_.chain;
  KnownFeatures known;
  known.mask = at::zeros({n, dim}, at::kBool);
  known.mask.narrow(1, 0, action_dim_).fill_(true);
  known.values = at::zeros({1, n, dim}, at::kFloat);
  known.values.select(0, 0).narrow(1, 0, action_dim_).copy_(actions);

  Generation generation(model_, sample, /*batch=*/1, &known, last_token_);
  const DenoiseEngine engine = MakeEngine(model_, schedule_, sample, graphs_.get());
  if (cache_) {
    try {
      engine.Run(generation.matrix(), generation.tokens(), *cache_, generation.hooks());
    } catch (...) {
      cache_->RollbackScratch();
      throw;
    }
    cache_->RollbackScratch();
  } else {
    engine.RunUncached(generation.matrix(), generation.tokens(), at::cat({sinks_, ring_}, 1),
                       generation.hooks());
  }
  const at::Tensor tokens = generation.FinalTokens().to(device);
  Remember(tokens);
  generated_ += n;
  ++chunks_;
  return tokens.select(0, 0).clone();
}

void OpenLoopRollout::Remember(const at::Tensor& tokens) {
  if (cache_) {
    MakeEngine(model_, schedule_, SampleOptions{}, graphs_.get()).AppendClean(tokens, *cache_);
  } else {
    const int64_t to_sinks = std::min<int64_t>(options_.num_sinks - sinks_.size(1), tokens.size(1));
    sinks_ = at::cat({sinks_, tokens.narrow(1, 0, to_sinks)}, 1);
    const at::Tensor ring = at::cat({ring_, tokens.narrow(1, to_sinks, tokens.size(1) - to_sinks)}, 1);
    const int64_t keep = std::min<int64_t>(ring.size(1), options_.history - options_.num_sinks);
    ring_ = ring.narrow(1, ring.size(1) - keep, keep).contiguous();
  }
  last_token_ = tokens.narrow(1, tokens.size(1) - 1, 1);
}

const ForwardGraphStats* OpenLoopRollout::graph_stats() const {
  return graphs_ ? &graphs_->stats() : nullptr;
}

int OpenLoopRollout::history_size() const {
  if (cache_) return static_cast<int>(cache_->size());
  return static_cast<int>(sinks_.defined() ? sinks_.size(1) + ring_.size(1) : 0);
}

int64_t OpenLoopRollout::StateBytes() const {
  if (cache_) return cache_->StorageBytes();
  return static_cast<int64_t>(options_.history) * model_.config().token_dim *
         static_cast<int64_t>(sizeof(float));
}

}  // namespace dfmpc::worldmodel
