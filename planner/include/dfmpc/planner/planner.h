// Model-predictive control with a diffusion-forcing world model.
//
// Every control step the planner appends the real token [a_{s-1}, o_s] to a
// bounded context cache (one single-token forward; the history is never
// re-encoded), denoises a plan of H future tokens and returns the action
// inside the first plan token, which is clean. Two modes:
//  * warm: the plan persists between steps at resting noise levels (first
//    token clean, later tokens noisier; plan_schedule.h). A step drops the
//    executed token, appends a pure-noise one, re-noises the plan a few
//    levels and runs r calls, so r = 1 costs one model call over the plan
//    window. With the block cache (front_tokens) only the front of the plan
//    runs between refreshes and the rest waits above its resting levels.
//  * replan: the baseline; the whole plan is generated from pure noise every
//    step along the complete pyramid (K + ceil((H - 1) u) calls).
// In both, N candidate plans are sampled as one batch over the shared
// context cache and scored by the task cost; cost guidance (the cost's
// gradient with respect to the noisy window tokens, added in every DDIM step)
// is optional.
//
// The API speaks Eigen in the environment's units; no LibTorch header is
// needed to use it.
#ifndef DFMPC_PLANNER_PLANNER_H_
#define DFMPC_PLANNER_PLANNER_H_

#include <Eigen/Core>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/planner/option_table.h"

namespace dfmpc::task {
struct TaskSpec;
}  // namespace dfmpc::task

namespace dfmpc::worldmodel {
struct Checkpoint;
class KvCache;
}  // namespace dfmpc::worldmodel

namespace dfmpc::planner {

class TaskCost;

enum class PlanMode { kWarm, kReplan };
enum class Selection { kBest, kMppi };

PlanMode ParsePlanMode(const std::string& name);  // "warm" or "replan"
std::string PlanModeName(PlanMode mode);
Selection ParseSelection(const std::string& name);  // "best" or "mppi"
std::string SelectionName(Selection selection);

// How Optimize's deadline governs the step's model calls. Either way it
// decides which calls start (a call starts only where its predicted end is
// before it).
enum class DeadlineKind {
  // A call that would end after the deadline stops between its transformer
  // blocks and the step is deferred, its model work undone
  // (StepStats::stopped): the step returns by the deadline but for one
  // block's overrun.
  kHard,
  // A call that started runs to its end, so a call longer than predicted
  // ends the step late by its overrun. For a caller that uses a late plan
  // rather than none (AsyncPlanner): a stopped call's work is lost, and
  // running the step again costs all of it.
  kStartOnly,
};
DeadlineKind ParseDeadlineKind(const std::string& name);  // "hard" or "start-only"
std::string DeadlineKindName(DeadlineKind kind);

// Every option, its range and its key in task files, on the command line
// and in Python: option_table.cpp (PlannerOptionTable), listed in
// docs/planner_options.md. A caller usually changes a few of the options
// its model's task file tunes (PlannerOverrides) rather than filling this.
struct PlannerOptions {
  PlanMode mode = PlanMode::kWarm;
  int horizon = 32;          // H: plan tokens
  int levels = 16;           // K: sampling levels
  double uncertainty = 0.0;  // pyramid u; 0 picks K / H (the whole plan denoises)
  int calls_per_step = 1;    // r (warm mode): re-noise by r - 1 levels, then r calls
  // Warm mode: extra levels the shifted plan is re-noised by before its calls
  // (the last call jumps back). Lets the front of the plan, whose actions are
  // about to run, react to the real observations; see docs/experiments.md.
  int renoise_levels = 4;
  // Warm mode, block cache (Fast-dLLM's approximate cache, issue 28): only
  // the first `front_tokens` plan tokens run every step; the rest wait at
  // their levels (attention is causal, so the front never reads them) and
  // the whole plan runs every `refresh_every` control steps, which also
  // scores the far plan afresh; with a deadline (Optimize) a refresh that
  // would not end by it waits for a later step. 0 (or >= H) or
  // refresh_every = 1: the whole plan every step, the exact mode.
  int front_tokens = 0;
  int refresh_every = 1;
  int candidates = 8;  // N: plans sampled as one batch
  Selection selection = Selection::kBest;
  double temperature = 0.05;    // MPPI temperature, in units of the summed cost
  double guidance_scale = 0.0;  // 0: no cost guidance
  // Classifier-free guidance toward a plan's outcome, for a model trained
  // with the outcome condition (`dfmpc train --outcome-condition`): each
  // window's output is u + w (c - u), c the model's conditioned on a window
  // as good as the target_outcome quantile of its training windows (0.9:
  // the best tenth), u its unconditioned one. 0: off; 1: the conditioned
  // model alone; other weights take two model calls per window.
  double outcome_guidance = 0.0;
  double target_outcome = 0.9;
  double eta = 0.0;             // DDIM stochasticity; > 0 keeps warm candidates diverse
  // The standard deviation of every noise the planner draws: the plans'
  // first noise, the tokens a warm step appends, its re-noise and DDIM's.
  // Below 1 the candidates are drawn nearer the model's most likely plans
  // (the Decision Diffuser's low-temperature sampling): the data's
  // exploration noise, which scatters the plans' actions from one token to
  // the next, is sampled less. 1: the model's own distribution.
  double noise_scale = 1.0;
  // The share of the candidates drawn at noise_scale (the first
  // round(share * candidates)); the rest are drawn at 1. Narrow candidates
  // chatter less; the wide ones beside them keep the spread a step needs to
  // pump a swing or leave a joint limit (docs/tuning.md). 1: all of them.
  double noise_scale_share = 1.0;
  // The executed action is the mean of the plan's first action_window
  // actions (1..H; 1: the first action alone): the step's choice (the MPPI
  // average or the best plan's first action) and the kept plan's next
  // action_window - 1. The plans' actions are samples of the data's
  // behaviour policy and scatter from one token to the next; the system
  // integrates them, so their local mean moves it alike, without the
  // chatter (docs/experiments.md, Smoothness).
  int action_window = 1;
  // The executed action is action_gain times that mean, clamped to [-1, 1]
  // (> 0; 1: the mean itself). The plans' actions follow the data's
  // behaviour policy, which seldom saturates, and the window's mean shrinks
  // them further; a gain above 1 gives back the actuator's last fraction,
  // which a weak or heavily damped joint needs (docs/experiments.md,
  // Robustness). The context records the action applied.
  double action_gain = 1.0;
  // The gain multiplies only the part of each coordinate's magnitude above
  // action_gain_knee (in [0, 1); 0: the whole action): actions up to the
  // knee, such as a balance's small corrections, run as planned, and their
  // chatter is not amplified, while a large one still reaches the limit.
  double action_gain_knee = 0.0;
  // A critic (`dfmpc train-value`) whose value joins each plan's cost:
  // value_weight times the discounted steps of reward it expects to be
  // missed from the plan's observation value_step steps ahead on (1..H; 0:
  // the middle of the plan, H / 2 rounded down; task_cost.h, WithValue). In
  // warm mode the step must be one the warm step estimates: the plan's far
  // tokens rest at level K, pure noise (H - 1 at most at the default u).
  // Empty: none. The defaults are the cart-pole's best (docs/experiments.md).
  std::string value_model;
  double value_weight = 0.1;
  int value_step = 0;
  // An ensemble of learned one-step dynamics (`dfmpc train-mlp --ensemble
  // E`, the mlp-mppi peer's model) that scores the candidates in place of
  // the observations sampled with them: each candidate's actions are rolled
  // out through the ensemble's mean from the current observation and the
  // task cost is taken on that rollout. Where the world model's sampled
  // observations are mostly its errors (a robot with contacts), ranking the
  // candidates by them seeks the errors out; a rollout has to follow the
  // actions (docs/robots.md). Costs one ensemble rollout of the plan's
  // length per step; cost guidance still follows the sampled observations.
  // Empty: none.
  std::string rollout_model;
  // With a rollout_model: the weight, in units of the task cost, of the
  // ensemble members' disagreement added to each candidate's cost: at each
  // rollout step the std across members of their predicted next observation
  // (normalized features, averaged), summed over the rollout. A candidate
  // whose actions lead where the members disagree is one whose rollout is
  // a guess (uncertainty-penalised planning, as in MOPO). 0: none.
  double rollout_disagreement = 0.0;
  // Real tokens a step's plan attends to (>= 2): the newest, which rides in
  // the step's first model call, and context_length - 1 in the context
  // cache (later calls of the step see those only): `sinks` pinned first
  // tokens plus a ring of the most recent ones. 0 picks the model's training
  // window minus H, so that context plus plan never exceed what the model
  // was trained on.
  int context_length = 0;
  // The model is trained on contiguous windows, so by default the context is
  // a plain sliding window; sinks keep an episode's first tokens instead.
  int sinks = 0;
  std::uint64_t seed = 0;
  // LibTorch intra-op threads for this planner's calls, set on the calling
  // thread alone for the duration of Reset, Act and Optimize and restored
  // after; 0 leaves the caller's setting. (LibTorch keeps this count per
  // thread in its OpenMP build, Debian's and the official ones; threads
  // started meanwhile keep the process default, and its inter-op pool,
  // process-wide, is not touched.)
  int threads = 0;
  // "cpu", "cuda" or "cuda:N": FromFile loads the model onto it (empty: the
  // CPU). A Planner made from a loaded checkpoint runs where its model is;
  // naming another device here is then an error.
  std::string device;
  // On a GPU, replay the step's model calls as CUDA graphs once their shapes
  // repeat (from the step the context ring is full); without guidance only
  // (worldmodel/forward_graphs.h). No effect on the CPU.
  bool cuda_graphs = true;
  // On the CPU, multiply the model's linear layers in bfloat16 in every call
  // of more than 64 tokens (a step's N candidates, a plan from noise;
  // dfmpc/worldmodel/cpu_bf16.h): 1.4x faster steps at N = 8 on a CPU with
  // AVX512-BF16, and slower ones without it (CpuHasBf16DotProduct).
  // Approximate (products rounded to bfloat16); unguided planners only.
  bool cpu_bf16 = false;

  // Throws std::invalid_argument naming the first impossible option.
  void Validate() const;
  // Whether the block cache is on: warm mode, 0 < front_tokens < horizon
  // and refresh_every > 1.
  bool BlockCacheOn() const;
};

// Options with the source of each (dfmpc info, control).
struct ResolvedPlannerOptions {
  PlannerOptions options;
  std::map<std::string, OptionSource> sources;  // by key, every option
};

// The options a planner for `task` runs with: the library's defaults, then
// the task file's [planner] table, then a distilled model's levels
// (`model_levels` > 0, AtLevels; unless the caller names `levels`), then
// the caller's overrides; validated. Throws std::invalid_argument naming
// the file and key, or the option, of the first bad one.
ResolvedPlannerOptions ResolvePlannerOptions(const task::TaskSpec& task, int model_levels = 0,
                                             const PlannerOverrides& caller = {});

// One line per option: key, value and source, aligned.
std::string FormatResolvedOptions(const ResolvedPlannerOptions& resolved);

// The options tuned for `task` (a built-in name or a task folder): the
// defaults, changed by its task file's [planner] table.
PlannerOptions TunedPlannerOptions(const std::string& task);
PlannerOptions TunedPlannerOptions(const task::TaskSpec& task);

// `options` moved to a grid of `levels` sampling levels, e.g. a distilled
// model's (worldmodel::ModelInfo::sampling_levels, which a planner must
// use): the warm step's re-noise levels and an explicit pyramid u scale by
// levels / options.levels, so that they keep their share of the noise range
// (re-noise rounded, and at least 1 where it was at least 1). Throws
// std::invalid_argument for levels < 1.
PlannerOptions AtLevels(PlannerOptions options, int levels);

// The plan kept after the last optimization, in the environment's units:
// row j predicts the token x_{p+1+j} = [a_{p+j}, o_{p+1+j}] of the control
// step p it was made at (`step`). Empty after a fallback step. (The action
// executed at step p + j is the mean of rows j to j + action_window - 1,
// row 0 replaced by the step's choice.)
struct Plan {
  Eigen::MatrixXd actions;       // H x action size (row 0: the action of step p)
  Eigen::MatrixXd observations;  // H x observation size
  std::vector<int> levels;       // noise level of every token after the step
  Eigen::MatrixXd tokens;        // H x token size, normalized values (diagnostics)
  double cost = 0.0;             // summed task cost of the chosen candidate
  std::int64_t step = 0;         // p: the control step whose observation it followed
};

// The last optimization: Reset's initial plan, or the last Optimize (Act).
struct StepStats {
  int calls = 0;                    // model calls spent on the plan
  std::int64_t token_forwards = 0;  // tokens run through the model, per candidate,
                                    // the appended real tokens included
  int steps_caught_up = 1;          // control steps the plan moved by (> 1: it had fallen behind)
  bool cut_short = false;           // the deadline ended the program early (Optimize)
  // Block cache: the whole plan was due but would not have ended by the
  // deadline, so only the front ran; the refresh is tried again next step.
  bool refresh_postponed = false;
  // The deadline left no time for the step's first model call: the plan
  // was not moved (Optimize returned false); the queued real tokens that
  // fitted joined the history and the rest stay queued.
  bool deferred = false;
  double needed_ms = 0.0;  // deferred: the time the step was predicted to need
  // Deferred because a model call would have ended after the deadline: it
  // stopped before one of its transformer blocks, and the step's model work
  // was undone (the catch-up forwards that had ended stay in the history).
  bool stopped = false;
  int graph_replays = 0;    // model calls replayed as CUDA graphs
  double latency_ms = 0.0;  // wall time of the optimization
  // No candidate plan was finite: the action is the previous plan's next
  // one (zero without one), the plan is dropped and the context history
  // restarts from this observation, so later steps recover.
  bool fallback = false;
};

// Thrown by Reset and Optimize when the abort callback asked them to stop
// (Planner::SetAbortCallback); the planner is then as before the call.
class PlannerAborted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Planner {
 public:
  // `checkpoint` supplies the model (shared, not copied) and its token layout;
  // `cost` must be for the model's task. Throws std::invalid_argument for bad
  // options or a cost for another task.
  Planner(const worldmodel::Checkpoint& checkpoint, std::unique_ptr<TaskCost> cost,
          const PlannerOptions& options);
  ~Planner();
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  // A model distilled to a number of levels (ModelInfo::sampling_levels)
  // plans with exactly that many: other options.levels are an error.
  //
  // Loads `model_path` with the cost of its task (the task files the model
  // carries, model_task.h) and the options that task's file tunes, moved to
  // a distilled model's levels, with `overrides` applied over them: only
  // the options it names change (ResolvePlannerOptions). The model loads
  // onto the overrides' "device" (default: the CPU). A non-empty `task` (a
  // built-in name or a task folder) supplies the cost and the tuned options
  // instead, and a model trained for a task of another name is an error
  // (std::runtime_error); so is a device this machine lacks or a bad
  // option (std::invalid_argument).
  static std::unique_ptr<Planner> FromFile(const std::string& model_path,
                                           const PlannerOverrides& overrides = {},
                                           const std::string& task = "");
  static std::unique_ptr<Planner> FromFile(const std::string& model_path,
                                           const PlannerOverrides& overrides,
                                           const task::TaskSpec& task);

  // Starts an episode at `observation` (o_0): forgets the plan and the
  // history, then plans step 0 from noise (the K model calls of a first
  // plan), so that the first Act costs no model call. A controller calls it
  // before its loop starts. Throws std::invalid_argument for a bad
  // observation (see Act); if it throws, Act refuses to run until a Reset
  // succeeds.
  void Reset(const Eigen::VectorXd& observation);
  // Takes the current observation and returns the action to execute now,
  // finite and within [-1, 1]; every Act receives the observation that the
  // last returned action led to: the loop is Reset(o); then a = Act(o),
  // o = step(a), repeated. The first Act after Reset may receive Reset's
  // observation again and then returns the action Reset planned (no model
  // call); any other observation there (a robot read twice, or moving while
  // Reset planned) is a control step of its own, reached by the zero action,
  // and costs a step like any later Act. Acts after the first are Observe(o),
  // Optimize(), Action(): one warm step.
  // Throws std::invalid_argument for a call before Reset, a wrong size, NaN
  // or inf, or an observation feature more than 1e4 standard deviations of
  // the training data from its mean. Strong guarantee: on any exception
  // (these, or one from the model, the cost or memory) the planner is as it
  // was before the call. When no candidate plan is finite the step falls
  // back (StepStats).
  Eigen::VectorXd Act(const Eigen::VectorXd& observation);

  // ---- A control step in three parts, for a planning thread (AsyncPlanner)
  // Throws std::invalid_argument for an observation Act would refuse; reads
  // only what construction fixed, so any thread may call it.
  void CheckObservation(const Eigen::VectorXd& observation) const;
  // Queues the observation of the next control step, reached by
  // `executed_action` (the action applied at the step before it; the
  // one-argument form takes Action()). No model work. A planner with more
  // steps queued than its context length drops the oldest and restarts its
  // history from the ones kept, as after a fallback. Throws as Act does (and
  // for an action of the wrong size or not finite), changing nothing.
  void Observe(const Eigen::VectorXd& observation);
  void Observe(const Eigen::VectorXd& observation, const Eigen::VectorXd& executed_action);
  // Appends the queued real tokens to the context and moves the plan to the
  // newest observed step: a warm step shifted by every step since the plan
  // was made (one call for r = 1 however many), or a plan from noise in
  // replan mode (and in warm mode once the plan is H steps old).
  // `deadline` makes it anytime. The planner times its model calls (per
  // kind and window size, the second longest of the last 16, samples older
  // than 0.5 s halved every further 0.5 s) and starts work only where its
  // predicted end is before the deadline:
  //  * a queued real token's forward, only if the step's first call still
  //    fits after it;
  //  * the first call, only if it fits; else the step is deferred: the
  //    plan stays (Action() reads it further on), the tokens that fitted
  //    stay in the history, the rest stay queued for the next Optimize,
  //    and it returns false (StepStats::deferred, needed_ms);
  //  * each later call, only if it and a jump after it fit; else this call
  //    is the last, a DDIM jump of every token to its final level
  //    (StepStats::cut_short).
  // With DeadlineKind::kHard (the default), a call that would end late (a
  // preempted thread, a call longer than its prediction) stops before its
  // next transformer block: the model checks the clock before each block,
  // and a call that at the pace of its blocks so far would not end, with
  // the scoring after it, by the deadline stops there. The step's model
  // work is undone (the catch-up forwards that ended stay in the history)
  // and the step is deferred (StepStats::stopped); with kStartOnly the call
  // runs to its end instead. A call replayed as a CUDA graph runs whole; a
  // thread of normal priority can still be preempted at any point
  // (docs/experiments.md, real-time control, measures the overrun with and
  // without SCHED_FIFO). A deadline shorter than the first call defers
  // the steps (size it by StepStats::needed_ms); since deferred steps
  // measure nothing, the predictions decay until a step runs (and
  // overruns) to re-measure, every second or two. Returns false, doing
  // nothing, when no observation is queued. Strong guarantee as for Act.
  bool Optimize(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max(),
      DeadlineKind kind = DeadlineKind::kHard);
  // A predicate that Reset and Optimize ask between model calls and
  // between a call's transformer blocks (on the thread running them); true
  // makes them stop and throw PlannerAborted, the planner as before the
  // call, after at most one block in progress. For a planning thread that
  // must stop quickly (AsyncPlanner's destructor and Reset); asked a few
  // times per call, so it must be cheap (an atomic load). Empty (the
  // default): never asked.
  void SetAbortCallback(std::function<bool()> abort);
  // The action for the newest observed step from the current plan: its
  // first action when the plan was made at that step, else the plan's
  // action for the steps since (zero past its end, or without a plan).
  // Finite and within [-1, 1]. Throws std::invalid_argument before Reset.
  Eigen::VectorXd Action() const;

  const Plan& plan() const;
  const StepStats& last_step() const;
  const PlannerOptions& options() const;
  const std::string& task() const;
  int observation_dim() const;
  int action_dim() const;
  // Physics steps per control step of the model's training data: Act must
  // be called at that control rate.
  int action_repeat() const;
  // Control steps since Reset whose observation the planner has received,
  // the first Act's included (0 right after Reset).
  std::int64_t steps() const;
  const worldmodel::KvCache& context_cache() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_PLANNER_H_
