// The denoise loop of diffusion forcing, shared by open-loop sampling
// (sampler.h) and the MPC planner: one engine, with hooks for what each
// caller adds.
//
// A program is a scheduling matrix whose row 0 holds the tokens' current
// levels; call m moves every token whose level drops from row m to row m + 1
// by one DDIM step. Run does this over a KV cache: a call's window runs from
// the first uncommitted token to the last moving one, tokens after it are
// skipped, and the window's clean prefix (tokens clean when the call
// starts, whose keys and values are then final) is committed to the cache's
// scratch region, so no later call runs it again. The caller rolls the
// scratch back when done.
//
// Every token of a window gets the clean estimate of its own level, moving
// or not (a clean token is its own estimate): the estimates feed guidance
// and the planner's scoring, and a token that waits a call must be estimated
// as it is, not as if it moved.
#ifndef DFMPC_WORLDMODEL_DENOISE_ENGINE_H_
#define DFMPC_WORLDMODEL_DENOISE_ENGINE_H_

#include <ATen/core/Tensor.h>
#include <c10/util/FunctionRef.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "dfmpc/worldmodel/noise_schedule.h"

namespace dfmpc::worldmodel {

class DfTransformerImpl;
class ForwardGraphs;
class KvCache;
class SchedulingMatrix;
struct WindowKeysValues;

struct DenoiseOptions {
  int num_levels = 8;  // K: the program's levels map to the schedule's timesteps
  Prediction prediction = Prediction::kV;
  double eta = 0.0;             // 0: deterministic DDIM
  double guidance_scale = 0.0;  // > 0: step against the cost's gradient
  // Classifier-free guidance toward an outcome (a model with the outcome
  // input, transformer.h): every window's output is u + w (c - u), c the
  // model's conditioned on target_outcome and u its unconditioned one. 0
  // (u alone) and 1 (c alone) take one model call per window, other
  // weights two.
  double outcome_guidance = 0.0;
  double target_outcome = 0.9;  // a quantile of the training windows' outcomes
};

struct DenoiseCounts {
  int calls = 0;                    // calls that ran the model
  std::int64_t token_forwards = 0;  // tokens run through it, per candidate (twice a window's
                                    // under two-call outcome guidance)
  bool cut_short = false;           // `may_continue` ended the program with a jump
};

// What a caller adds to the loop; every member may be left empty. Token
// ranges are [begin, begin + count) of the program's H tokens.
struct DenoiseHooks {
  // Known-action side input of the H tokens ([N or 1, H, a + 1],
  // transformer.h); each window gets its part.
  at::Tensor known_actions;
  // Called before every call, whether it runs the model or not, with the
  // alpha-bars of the tokens' levels before it ([1, H, 1]).
  std::function<void(int row, const at::Tensor& alpha_bars)> before_call;
  // The DDIM noise of a window ([N, count, d]); required when eta > 0.
  std::function<at::Tensor(int row, int begin, int count)> noise;
  // Guidance cost (with guidance_scale > 0): summed cost [N] of clean
  // prefixes [N, n, d], differentiable. A window's prefix is the tokens
  // before it followed by its clean estimates; the step subtracts the scaled
  // gradient with respect to the window's input (autograd runs on the
  // window alone; the cache and earlier tokens are constants).
  std::function<at::Tensor(const at::Tensor& clean_prefix)> cost;
  // Receives the window's clean estimates ([N, count, d]) after its step.
  std::function<void(int begin, const at::Tensor& estimates)> estimates;
  // Called after a call stepped its window; tokens before `begin` are clean
  // and were not touched.
  std::function<void(int row, int begin)> after_step;
  // Run only (an anytime deadline): asked before every call that would run
  // the model, except the program's last, with the tokens that call would
  // run and those a jump from here would (the lead's included in both);
  // false makes this call the last, a DDIM jump of every token straight to
  // its level in the program's last row. It may throw to abandon the run.
  std::function<bool(int call_tokens, int jump_tokens)> may_continue;
  // Run only: told just before each model call starts, with its window's
  // tokens (the lead's included), e.g. to time the calls.
  std::function<void(int tokens)> model_call;
};

class DenoiseEngine {
 public:
  // The model and schedule must outlive the engine. With `graphs` (which
  // must outlive it too, and be for this model) Run's and AppendClean's
  // model calls go through it: CUDA graphs where shapes repeat
  // (forward_graphs.h).
  // Throws std::invalid_argument for outcome guidance the options or the
  // model cannot give (a negative weight, a target outside [0, 1], a model
  // without the outcome input, a weight above a CFG-aware model's maximum).
  DenoiseEngine(DfTransformerImpl& model, const NoiseSchedule& schedule,
                const DenoiseOptions& options, ForwardGraphs* graphs = nullptr);

  // Model calls per window: 2 under outcome guidance other than 0 or 1,
  // unless the model takes the weight as an input (CFG-aware).
  int ModelCallsPerWindow() const;

  // Applies every call of `program` to `tokens` ([N, H, d], edited in place)
  // after the context in `cache`, whose scratch region must have room for
  // the H tokens and batch N. `lead` ([1, n, d], clean; undefined for none)
  // joins the context: it leads the window of the first call that runs
  // (batch-broadcast) and its keys and values go to the cache's persistent
  // region right after that call, one forward serving both; if no call runs
  // it gets a forward of its own. Its forwards are counted. A lead and known
  // actions together throw std::invalid_argument (no caller needs both).
  DenoiseCounts Run(const SchedulingMatrix& program, const at::Tensor& tokens, KvCache& cache,
                    const DenoiseHooks& hooks, const at::Tensor& lead = at::Tensor()) const;

  // The reference algorithm (the Diffusion Forcing code's): every call runs
  // the model over `context` ([1 or N, S, d], clean, no side input) and all
  // H tokens, without a cache. It shares the tables, the step and the hooks
  // with Run and differs only in what each call feeds the model, which is
  // exactly what the cached-equals-uncached tests check; a separate copy of
  // the step would let the two drift apart unnoticed elsewhere.
  DenoiseCounts RunUncached(const SchedulingMatrix& program, const at::Tensor& tokens,
                            const at::Tensor& context, const DenoiseHooks& hooks) const;

  // Runs clean `tokens` ([persistent batch, n, d]) after the cache's tokens
  // and appends their keys and values to its persistent region. Returns n.
  std::int64_t AppendClean(const at::Tensor& tokens, KvCache& cache) const;

 private:
  struct Tables;
  struct Estimate;
  // Maps a window's input to the model's output for it.
  using Forward = c10::function_ref<at::Tensor(const at::Tensor& input)>;
  // Runs the model once over a window with an outcome input (undefined:
  // none), filling `window_kv` when it is not null.
  using ModelCall =
      c10::function_ref<at::Tensor(const at::Tensor& outcome, WindowKeysValues* window_kv)>;

  // Throws std::invalid_argument for a hook the options need but lack.
  void CheckHooks(const DenoiseHooks& hooks) const;
  // The tables of `program` on `device`: those of the last run when it ran
  // the same program (a planner's warm step runs one program every step).
  const Tables& TablesFor(const SchedulingMatrix& program, at::Device device) const;
  // A model call over the cache, through the graphs when there are any.
  at::Tensor CachedForward(const at::Tensor& tokens, const at::Tensor& timesteps,
                           const KvCache& cache, WindowKeysValues* window_kv,
                           const at::Tensor& known_actions = at::Tensor(),
                           const at::Tensor& outcome = at::Tensor()) const;
  // A window's output under the options' outcome guidance, from one or two
  // `call`s; `window_kv` gets the conditioned call's keys and values (its
  // clean tokens' are the unconditioned call's too, transformer.h).
  at::Tensor Guided(ModelCall call, WindowKeysValues* window_kv) const;
  // Whether Guided needs one call: weight 0 or 1, or a CFG-aware model.
  bool GuidedInOneCall() const;
  // Clean and noise estimates of tokens [begin, begin + count) before call
  // `row`, and the guidance gradient.
  Estimate Evaluate(const Tables& tables, int row, int begin, int count, const at::Tensor& tokens,
                    const DenoiseHooks& hooks, Forward forward) const;
  // Moves the window's tokens that `moving` ([1, count, 1] bool) marks one
  // DDIM step to their level in row `target`, then runs the hooks.
  void Step(const Tables& tables, int row, int target, const at::Tensor& moving, int begin,
            int count, const at::Tensor& tokens, const DenoiseHooks& hooks,
            const Estimate& estimate) const;

  DfTransformerImpl& model_;
  const NoiseSchedule& schedule_;
  DenoiseOptions options_;
  ForwardGraphs* graphs_;
  at::Tensor outcome_condition_;  // [1, 2] OutcomeInput of the target; under guidance only
  mutable std::shared_ptr<const Tables> tables_;  // of the last program run
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_DENOISE_ENGINE_H_
