// Measured durations of a planner's model calls, to decide before a call
// whether it still fits before a deadline (Planner::Optimize). No LibTorch;
// preallocated.
//
// A call's duration depends on its kind and the tokens in its window; per
// (kind, tokens) the clock keeps the last kSamples durations and predicts
// the second longest of them: high enough that jitter rarely exceeds it,
// while one stall (a preempted thread) is forgotten after kSamples calls
// instead of making every later deadline look too short. Samples older
// than kFresh count for half as much every further kHalfLife: a planner
// whose deadlines are too short for its predictions runs no calls and so
// measures none, and the decay makes it try again (and re-measure) after a
// while instead of never, e.g. once a slow spell that inflated the
// predictions has passed. The older samples still count, decayed, so one
// slow first call after an idle spell does not set the prediction alone.
#ifndef DFMPC_PLANNER_SRC_CALL_CLOCK_H_
#define DFMPC_PLANNER_SRC_CALL_CLOCK_H_

#include <array>
#include <chrono>
#include <vector>

namespace dfmpc::planner {

enum class CallKind {
  kContext,  // one real token appended to the history (batch 1)
  kPlan,     // a window of plan tokens over the candidates
  kScore,    // the step's end: scoring and choosing a candidate (tokens: 1)
};

class CallClock {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kSamples = 16;
  static constexpr std::chrono::milliseconds kFresh{500};
  static constexpr std::chrono::milliseconds kHalfLife{500};

  // Windows of 1..max_tokens tokens.
  explicit CallClock(int max_tokens);

  // A call of `tokens` begins at `now` (ending the one running, if any).
  void Begin(CallKind kind, int tokens, Clock::time_point now = Clock::now());
  // The running call ended at `now`: its duration is recorded.
  void End(Clock::time_point now = Clock::now());
  // The running call stopped with `done` (in (0, 1]) of its work done: its
  // duration is recorded as the time so far plus the rest at the pace its
  // prediction gives (the time so far / done without a prediction). Not the
  // time so far / done: a preemption in the part that ran says nothing of
  // the rest.
  void EndPartly(double done, Clock::time_point now = Clock::now());
  // The running call threw: nothing is recorded.
  void Abandon() { running_ = false; }

  // The predicted duration of a call, in seconds, at `now`: from calls of
  // its size, else the nearest larger size measured, else the largest
  // smaller one scaled by the token ratio; 0 without any sample of its kind.
  double Predict(CallKind kind, int tokens, Clock::time_point now = Clock::now()) const;

 private:
  struct Samples {
    std::array<double, kSamples> seconds{};
    std::array<Clock::time_point, kSamples> taken{};
    int count = 0, next = 0;
  };
  Samples& At(CallKind kind, int tokens);
  const Samples& At(CallKind kind, int tokens) const;
  // Of the samples decayed to `now`; 0 without samples.
  static double SecondLongest(const Samples& samples, Clock::time_point now);

  int max_tokens_;
  static constexpr int kKinds = 3;
  std::vector<Samples> samples_;  // [kind][tokens - 1]
  bool running_ = false;
  CallKind running_kind_ = CallKind::kPlan;
  int running_tokens_ = 0;
  Clock::time_point running_since_;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_SRC_CALL_CLOCK_H_
