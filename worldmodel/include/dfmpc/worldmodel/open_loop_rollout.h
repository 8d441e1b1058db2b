// Open-loop rollouts of any length on given actions ("dreaming"): the model
// generates the tokens that follow a clean context, chunk after chunk, each
// chunk's tokens having their actions known (sampler.h's inpainting and,
// where the model has it, the clean side input), and every finished chunk
// joining the history the next one attends to.
//
// Memory is bounded whatever the length: the history keeps its first
// `num_sinks` tokens and a ring of the newest ones, `history` tokens in all
// (kv_cache.h: attention sinks plus a sliding window, read at cache-relative
// positions). Two cache modes:
//  * kExact: the history lives in a KV cache; each chunk is one program of
//    the denoise engine over it, then one forward appends the finished
//    chunk's keys and values. Nothing grows: storage is fixed at
//    construction.
//  * kNone (the reference): every call runs the model over the kept history
//    tokens and the chunk.
// While nothing has been evicted (context + generated <= history) the two
// give the same tokens up to float rounding. After eviction they differ by
// design: the cache keeps the keys each token got when it was appended,
// when it saw older tokens that the reference has since dropped
// (StreamingLLM's trade).
#ifndef DFMPC_WORLDMODEL_OPEN_LOOP_ROLLOUT_H_
#define DFMPC_WORLDMODEL_OPEN_LOOP_ROLLOUT_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "dfmpc/worldmodel/noise_schedule.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::worldmodel {

class DfTransformerImpl;
class ForwardGraphs;
struct ForwardGraphStats;
class KvCache;
class ObservationChain;

struct RolloutOptions {
  int chunk = 8;  // tokens generated together (one scheduling program)
  ScheduleKind schedule = ScheduleKind::kPyramid;
  int num_levels = 16;  // K
  double uncertainty = 1.0;
  double eta = 0.0;
  Prediction prediction = Prediction::kV;
  CacheMode cache_mode = CacheMode::kExact;
  // History tokens kept (sinks + ring); 0: as many as the model's
  // max_positions leaves beside a chunk.
  int history = 0;
  int num_sinks = 2;
  uint64_t seed = 0;
  // Links each generated token to the one before it (observation_chain.h);
  // may be null. Must outlive the rollout.
  const ObservationChain* chain = nullptr;
  // On a CUDA model with kExact: replay the chunks' model calls as CUDA
  // graphs once the history is full (forward_graphs.h).
  bool cuda_graphs = true;
};

class OpenLoopRollout {
 public:
  // `action_dim`: the leading token features that are actions. The model
  // and schedule must outlive the rollout. Throws std::invalid_argument for
  // impossible options (chunk < 1, history beyond what max_positions allows
  // beside a chunk, sinks not below the history, ...).
  OpenLoopRollout(DfTransformerImpl& model, const NoiseSchedule& schedule, int action_dim,
                  const RolloutOptions& options);
  ~OpenLoopRollout();
  OpenLoopRollout(const OpenLoopRollout&) = delete;
  OpenLoopRollout& operator=(const OpenLoopRollout&) = delete;

  // Starts over from clean normalized context tokens [S, d], S >= 1 (the
  // history keeps what it can of them). Throws std::invalid_argument for
  // another shape or non-finite values.
  void Reset(const at::Tensor& context);

  // Generates the next n tokens, n = rows of `actions` in [1, chunk], whose
  // action features are `actions` ([n, action_dim], normalized). Returns
  // them ([n, d], normalized, actions exact); they join the history.
  // Throws std::logic_error before Reset, std::invalid_argument for bad
  // actions.
  at::Tensor Next(const at::Tensor& actions);

  int64_t generated() const { return generated_; }
  // Tokens the next chunk attends to.
  int history_size() const;
  // Bytes of the state the rollout keeps between chunks (cache storage or
  // the kept history): independent of the rollout's length.
  int64_t StateBytes() const;
  const RolloutOptions& options() const { return options_; }
  // What the CUDA graphs did, or null when the rollout uses none.
  const ForwardGraphStats* graph_stats() const;

 private:
  // Adds clean normalized tokens [1, n, d] to the history.
  void Remember(const at::Tensor& tokens);

  DfTransformerImpl& model_;
  const NoiseSchedule& schedule_;
  int action_dim_;
  RolloutOptions options_;
  std::unique_ptr<KvCache> cache_;  // kExact
  std::unique_ptr<ForwardGraphs> graphs_;  // kExact on CUDA with cuda_graphs
  at::Tensor sinks_, ring_;         // kNone: the kept history, [1, n, d] each
  at::Tensor last_token_;           // [1, 1, d], the newest history token
  int64_t generated_ = 0;
  int64_t chunks_ = 0;
  bool started_ = false;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_OPEN_LOOP_ROLLOUT_H_
