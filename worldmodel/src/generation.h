// One generation of H tokens by the denoise engine, as open-loop sampling
// runs it (internal): the noisy tokens, their RNG, the known features and the
// observation chain, packaged as the engine's hooks. Shared by the sampler
// (sampler.h) and chunked open-loop rollouts (open_loop_rollout.h).
#ifndef DFMPC_WORLDMODEL_SRC_GENERATION_H_
#define DFMPC_WORLDMODEL_SRC_GENERATION_H_

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "dfmpc/worldmodel/denoise_engine.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/scheduling_matrix.h"

namespace dfmpc::worldmodel {

// The engine for the sampling options (no guidance), with the model calls
// through `graphs` when given (forward_graphs.h).
DenoiseEngine MakeEngine(DfTransformerImpl& model, const NoiseSchedule& schedule,
                         const SampleOptions& options, ForwardGraphs* graphs = nullptr);

class Generation {
 public:
  // `known` (may be null) must have been checked against batch, H and d.
  // `context` ([1 or B, S, d], normalized) gives the device and, with a
  // chain, the token the first generated one links to (none when S = 0).
  Generation(const DfTransformerImpl& model, const SampleOptions& options, int64_t batch,
             const KnownFeatures* known, const at::Tensor& context);
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  const SchedulingMatrix& matrix() const { return matrix_; }
  const at::Tensor& tokens() const { return tokens_; }
  const DenoiseHooks& hooks() const { return hooks_; }

  // The tokens after the last call, with known features set to their values
  // exactly.
  const at::Tensor& FinalTokens();

 private:
  // Sets the known features of every token to their values noised to the
  // tokens' `alpha_bars` ([1, H, 1]). No-op without known features.
  void ImposeKnown(const at::Tensor& alpha_bars);
  // Links each token that call `row` made clean to its predecessor, in
  // token order, and relinks the clean tokens right after a changed one
  // (schedules such as the trapezoid finish later tokens first). Tokens
  // before `begin` are clean and unchanged.
  void LinkClean(int row, int begin);

  const SampleOptions& options_;
  SchedulingMatrix matrix_;
  at::Generator generator_;
  at::Device device_;
  at::Tensor tokens_;
  at::Tensor last_context_;
  at::Tensor known_mask_;    // bool, broadcastable to tokens_
  at::Tensor known_values_;  // float, broadcastable to tokens_
  at::Tensor call_noise_;    // this call's DDIM noise of all H tokens (eta > 0)
  DenoiseHooks hooks_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_GENERATION_H_
