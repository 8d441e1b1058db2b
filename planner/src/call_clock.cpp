#include "call_clock.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dfmpc::planner {

CallClock::CallClock(int max_tokens)
    : max_tokens_(max_tokens), samples_(kKinds * std::max(max_tokens, 1)) {
  if (max_tokens < 1) throw std::invalid_argument("CallClock: max_tokens must be >= 1");
}

CallClock::Samples& CallClock::At(CallKind kind, int tokens) {
  return samples_[static_cast<int>(kind) * max_tokens_ + std::clamp(tokens, 1, max_tokens_) - 1];
}

const CallClock::Samples& CallClock::At(CallKind kind, int tokens) const {
  return samples_[static_cast<int>(kind) * max_tokens_ + std::clamp(tokens, 1, max_tokens_) - 1];
}

void CallClock::Begin(CallKind kind, int tokens, Clock::time_point now) {
  End(now);
  running_ = true;
  running_kind_ = kind;
  running_tokens_ = tokens;
  running_since_ = now;
}

void CallClock::End(Clock::time_point now) { EndPartly(1.0, now); }

void CallClock::EndPartly(double done, Clock::time_point now) {
  if (!running_) return;
  running_ = false;
  done = std::clamp(done, 1e-3, 1.0);
  const double so_far = std::chrono::duration<double>(now - running_since_).count();
  const double predicted = Predict(running_kind_, running_tokens_, now);
  const double rest = predicted > 0.0 ? predicted * (1.0 - done) : so_far * (1.0 - done) / done;
  Samples& samples = At(running_kind_, running_tokens_);
  samples.seconds[samples.next] = so_far + rest;
  samples.taken[samples.next] = now;
  samples.next = (samples.next + 1) % kSamples;
  samples.count = std::min(samples.count + 1, kSamples);
}

double CallClock::SecondLongest(const Samples& samples, Clock::time_point now) {
  double longest = 0.0, second = 0.0;
  for (int i = 0; i < samples.count; ++i) {
    const double stale = std::chrono::duration<double>(now - samples.taken[i] - kFresh).count() /
                         std::chrono::duration<double>(kHalfLife).count();
    const double s = stale > 0.0 ? samples.seconds[i] * std::exp2(-stale) : samples.seconds[i];
    if (s > longest) {
      second = longest;
      longest = s;
    } else if (s > second) {
      second = s;
    }
  }
  return samples.count == 1 ? longest : second;
}

double CallClock::Predict(CallKind kind, int tokens, Clock::time_point now) const {
  tokens = std::clamp(tokens, 1, max_tokens_);
  for (int t = tokens; t <= max_tokens_; ++t) {
    const double predicted = SecondLongest(At(kind, t), now);
    if (predicted > 0.0) return predicted;
  }
  for (int t = tokens - 1; t >= 1; --t) {
    const double predicted = SecondLongest(At(kind, t), now);
    if (predicted > 0.0) return predicted * tokens / t;
  }
  return 0.0;
}

}  // namespace dfmpc::planner
