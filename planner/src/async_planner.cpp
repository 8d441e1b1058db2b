#include "dfmpc/planner/async_planner.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "planned_action.h"

namespace dfmpc::planner {
namespace {

using Clock = std::chrono::steady_clock;

// What the control thread reads: a copy of the planner's newest plan.
struct PublishedPlan {
  std::int64_t step = -1;   // the control step it was made at
  Eigen::VectorXd chosen;   // the action for that step
  Eigen::MatrixXd actions;  // the plan's actions for it and the steps after
};

// A control step's observation, the action applied before it and when it
// arrived.
struct Observed {
  Eigen::VectorXd observation;
  Eigen::VectorXd action;
  Clock::time_point arrived;
};

void RequireDuration(std::chrono::microseconds value, const char* name) {
  if (value.count() < 0 || value > std::chrono::hours(1)) {
    throw std::invalid_argument(std::string("AsyncPlanner: ") + name +
                                " must be in [0, 1 hour], got " + std::to_string(value.count()) +
                                " us");
  }
}

// The message of a planning thread's exception, for AsyncStats::last_error;
// empty where even that cannot be built (out of memory). Short literals fit
// the string's inline buffer, so building them does not allocate.
std::string ErrorMessage(const std::exception_ptr& error) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    try {
      return e.what();
    } catch (...) {
      return std::string();
    }
  } catch (...) {
    return "unknown error";
  }
}

// How long after an observation arrives its optimization must end.
std::chrono::microseconds OptimizeBudget(const AsyncPlannerOptions& options) {
  const std::chrono::microseconds span =
      options.max_wait.count() > 0 ? options.max_wait : options.period;
  return span - options.margin;
}

}  // namespace

class AsyncPlanner::Impl {
 public:
  Impl(std::unique_ptr<Planner> planner, const AsyncPlannerOptions& options)
      : planner_(std::move(planner)), options_(options), budget_(OptimizeBudget(options)) {
    if (!planner_) throw std::invalid_argument("AsyncPlanner: no planner given");
    RequireDuration(options.max_wait, "max_wait");
    RequireDuration(options.period, "period");
    RequireDuration(options.margin, "margin");
    planner_->SetAbortCallback([this] { return abort_.load(std::memory_order_relaxed); });
    // The planner keeps at most its context length of steps queued, so the
    // inbox rarely holds more; reserving keeps steady operation
    // allocation-free in the queue itself.
    inbox_.reserve(planner_->options().horizon);
    work_items_.reserve(planner_->options().horizon);
    thread_ = std::thread([this] { Loop(); });
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      abort_ = true;  // the optimization in progress stops after a transformer block
    }
    work_.notify_all();
    thread_.join();
  }

  void Reset(const Eigen::VectorXd& observation) {
    planner_->CheckObservation(observation);
    std::unique_lock<std::mutex> lock(mutex_);
    ++episode_;
    abort_ = true;  // an optimization for the old episode stops after a transformer block
    inbox_.clear();
    ready_ = false;
    reset_observation_ = observation;
    reset_requested_ = true;
    work_.notify_one();
    published_.wait(lock, [&] { return !reset_requested_; });
    if (reset_error_) std::rethrow_exception(std::exchange(reset_error_, nullptr));
    ready_ = true;
    control_step_ = -1;
    stats_ = AsyncStats{};
  }

  Eigen::VectorXd Step(const Eigen::VectorXd& observation) {
    planner_->CheckObservation(observation);  // reads only what construction fixed
    const Clock::time_point arrived = Clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    if (!ready_) throw std::invalid_argument("AsyncPlanner: Step called before Reset");
    std::int64_t step = control_step_ + 1;
    if (step == 0 && observation != reset_observation_) {
      // A step of its own, reached by the zero action (Planner::Act).
      last_action_ = Eigen::VectorXd::Zero(planner_->action_dim());
      step = 1;
    }
    if (step > 0) {
      inbox_.push_back({observation, last_action_, arrived});
      work_.notify_one();
    }
    control_step_ = step;
    published_.wait_for(lock, options_.max_wait, [&] { return plan_.step >= step; });
    const std::int64_t age = step - plan_.step;
    const PlannerOptions& options = planner_->options();
    last_action_ = PlannedAction(plan_.chosen, plan_.actions, age, options.action_window,
                                 options.action_gain, options.action_gain_knee);
    ++stats_.steps;
    if (age > 0) ++stats_.misses;
    stats_.max_action_age = std::max(stats_.max_action_age, age);
    stats_.total_action_age += age;
    return last_action_;
  }

  AsyncStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

  const Planner& planner() const { return *planner_; }

 private:
  // The planning thread: resets the planner on request, otherwise feeds it
  // every observation that arrived and publishes the new plan.
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stop_ || reset_requested_ || !inbox_.empty(); });
      if (stop_) return;
      const std::int64_t episode = episode_;
      const bool reset = reset_requested_;
      if (reset) abort_ = false;  // the reset itself must run
      work_items_.swap(inbox_);
      PublishedPlan plan;
      bool planned = false, late = false, stopped = false;
      std::exception_ptr error;
      std::string message;
      // Everything that may throw (std::bad_alloc included) is inside the
      // try: an exception escaping this thread would terminate the process.
      try {
        if (reset) {
          // Copied under the lock: another Reset may write it meanwhile.
          const Eigen::VectorXd observation = reset_observation_;
          lock.unlock();
          planner_->Reset(observation);
          planned = true;
        } else {
          lock.unlock();
          for (const Observed& item : work_items_) planner_->Observe(item.observation, item.action);
          planned =
              planner_->Optimize(Deadline(work_items_.back().arrived), options_.deadline_kind);
          late = !planned && planner_->last_step().deferred;
          stopped = late && planner_->last_step().stopped;
          if (late) planned = planner_->Optimize();  // for the steps after this one
        }
        if (planned) {
          plan = PublishedPlan{planner_->plan().step, planner_->Action(), planner_->plan().actions};
        }
      } catch (...) {
        error = std::current_exception();
        message = ErrorMessage(error);
      }
      work_items_.clear();
      if (!lock.owns_lock()) lock.lock();  // still held when the copy failed
      if (reset) {
        reset_requested_ = false;
        reset_error_ = error;
      } else if (episode != episode_ || stop_) {
        continue;  // a Reset (or the destructor) arrived meanwhile: this work is stale
      } else if (error) {
        ++stats_.planner_errors;
        stats_.last_error = std::move(message);
      }
      if (!error) Count(planner_->last_step(), planned, late, stopped, plan);
      published_.notify_all();
    }
  }

  // The deadline of an optimization whose newest observation arrived then.
  Clock::time_point Deadline(Clock::time_point arrived) const {
    if (budget_.count() <= 0) return Clock::time_point::max();
    return arrived + budget_;
  }

  // Publishes a finished optimization and counts it. Under mutex_.
  void Count(const StepStats& step, bool planned, bool late, bool stopped, PublishedPlan& plan) {
    stats_.last_step = step;
    stats_.fallbacks += step.fallback ? 1 : 0;
    stats_.cut_short += step.cut_short ? 1 : 0;
    stats_.late += late ? 1 : 0;
    stats_.stopped += stopped ? 1 : 0;
    if (!planned) return;
    std::swap(plan_, plan);
    ++stats_.plans;
    stats_.total_plan_ms += step.latency_ms;
    stats_.max_plan_ms = std::max(stats_.max_plan_ms, step.latency_ms);
  }

  std::unique_ptr<Planner> planner_;  // used by the planning thread only, but for const reads
  const AsyncPlannerOptions options_;
  const std::chrono::microseconds budget_;  // see AsyncPlannerOptions::margin

  mutable std::mutex mutex_;
  std::condition_variable work_;       // the planning thread waits for work
  std::condition_variable published_;  // Step and Reset wait for a plan
  // Asked by the planner between model calls and blocks; set with mutex_ held.
  std::atomic<bool> abort_{false};
  // Guarded by mutex_:
  bool stop_ = false;
  bool ready_ = false;  // a Reset succeeded
  bool reset_requested_ = false;
  std::int64_t episode_ = 0;
  Eigen::VectorXd reset_observation_;
  std::vector<Observed> inbox_;
  PublishedPlan plan_;
  std::exception_ptr reset_error_;
  AsyncStats stats_;
  // Control thread only:
  std::int64_t control_step_ = -1;
  Eigen::VectorXd last_action_;
  // Planning thread only:
  std::vector<Observed> work_items_;

  std::thread thread_;  // last: starts after everything it reads exists
};

AsyncPlanner::AsyncPlanner(std::unique_ptr<Planner> planner, const AsyncPlannerOptions& options)
    : impl_(std::make_unique<Impl>(std::move(planner), options)) {}
AsyncPlanner::~AsyncPlanner() = default;
void AsyncPlanner::Reset(const Eigen::VectorXd& observation) { impl_->Reset(observation); }
Eigen::VectorXd AsyncPlanner::Step(const Eigen::VectorXd& observation) {
  return impl_->Step(observation);
}
AsyncStats AsyncPlanner::stats() const { return impl_->stats(); }
int AsyncPlanner::observation_dim() const { return impl_->planner().observation_dim(); }
int AsyncPlanner::action_dim() const { return impl_->planner().action_dim(); }
int AsyncPlanner::action_repeat() const { return impl_->planner().action_repeat(); }

}  // namespace dfmpc::planner
