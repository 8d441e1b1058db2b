#include "training_loop.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace dfmpc::worldmodel {
namespace {

// Column 0: step, then train loss, validation loss, learning rate, tokens/s.
at::Tensor LogToTensor(const std::vector<TrainLogRow>& log) {
  at::Tensor t = at::zeros({static_cast<int64_t>(log.size()), 5}, at::kDouble);
  for (size_t i = 0; i < log.size(); ++i) {
    const TrainLogRow& r = log[i];
    const double row[5] = {static_cast<double>(r.step), r.train_loss, r.validation_loss,
                           r.learning_rate, r.tokens_per_second};
    for (int c = 0; c < 5; ++c) t[i][c] = row[c];
  }
  return t;
}

std::vector<TrainLogRow> LogFromTensor(const at::Tensor& t) {
  std::vector<TrainLogRow> log(t.size(0));
  auto a = t.accessor<double, 2>();
  for (int64_t i = 0; i < t.size(0); ++i) {
    log[i] = {static_cast<int>(a[i][0]), a[i][1], a[i][2], a[i][3], a[i][4]};
  }
  return log;
}

}  // namespace

TrainingLoop::TrainingLoop(DfTransformer model, DfTransformer ema,
                           const WindowTrainingSettings& settings, int validate_every,
                           int checkpoint_every)
    : model_(std::move(model)),
      ema_(std::move(ema)),
      settings_(settings),
      validate_every_(validate_every),
      checkpoint_every_(checkpoint_every),
      optimizer_(model_->parameters(), settings.optimizer) {
  CopyWeights(*model_, *ema_);
  ema_->eval();
}

void TrainingLoop::Run(const Hooks& hooks,
                       const std::function<void(const TrainProgress&)>& on_progress,
                       const std::function<void(const std::vector<TrainLogRow>&)>& on_log) {
  const auto start = std::chrono::steady_clock::now();
  int run_steps = 0;  // of this call: a resumed run's throughput is its own
  const int steps = settings_.optimizer.steps;
  while (step_ < steps) {
    const double loss = Step(hooks);
    ++step_;
    ++run_steps;
    loss_sum_ += loss;
    ++loss_count_;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double tokens_per_second = static_cast<double>(run_steps) *
                                     settings_.optimizer.batch_size * settings_.window /
                                     std::max(seconds, 1e-9);
    if (on_progress) on_progress({step_, steps, loss_sum_ / loss_count_, tokens_per_second});
    const bool last = step_ == steps;
    if (step_ % validate_every_ == 0 || last) {
      log_.push_back({step_, loss_sum_ / loss_count_, hooks.validation_loss(*ema_),
                      optimizer_.LearningRate(step_ - 1), tokens_per_second});
      loss_sum_ = 0.0;
      loss_count_ = 0;
      if (on_log && hooks.writes_files) on_log(log_);
    }
    if (hooks.checkpoint && hooks.writes_files && checkpoint_every_ > 0 &&
        (step_ % checkpoint_every_ == 0 || last)) {
      hooks.checkpoint();
    }
  }
}

double TrainingLoop::Step(const Hooks& hooks) {
  model_->train();
  std::function<at::Tensor(const at::Tensor&)> after_backward;
  if (hooks.after_backward) {
    after_backward = [&](const at::Tensor& loss) { return hooks.after_backward(*model_, loss); };
  }
  const at::Tensor loss = optimizer_.Step(
      step_, [&] { return hooks.loss(*model_); }, after_backward);
  UpdateEma(*ema_, *model_, settings_.ema_decay, step_);
  return loss.item<double>();
}

void TrainingLoop::Save(torch::serialize::OutputArchive& archive) {
  archive.write("step", c10::IValue(static_cast<int64_t>(step_)));
  archive.write("loss_sum", c10::IValue(loss_sum_));
  archive.write("loss_count", c10::IValue(static_cast<int64_t>(loss_count_)));
  archive.write("log", LogToTensor(log_));
  torch::serialize::OutputArchive model, ema, optimizer;
  model_->save(model);
  ema_->save(ema);
  optimizer_.adamw().save(optimizer);
  archive.write("model", model);
  archive.write("ema", ema);
  archive.write("optimizer", optimizer);
}

void TrainingLoop::Load(torch::serialize::InputArchive& archive) {
  c10::IValue step, loss_sum, loss_count;
  archive.read("step", step);
  archive.read("loss_sum", loss_sum);
  archive.read("loss_count", loss_count);
  at::Tensor log;
  archive.read("log", log);
  torch::serialize::InputArchive model, ema, optimizer;
  archive.read("model", model);
  archive.read("ema", ema);
  archive.read("optimizer", optimizer);
  model_->load(model);
  ema_->load(ema);
  optimizer_.adamw().load(optimizer);
  step_ = static_cast<int>(step.toInt());
  loss_sum_ = loss_sum.toDouble();
  loss_count_ = static_cast<int>(loss_count.toInt());
  log_ = LogFromTensor(log);
}

}  // namespace dfmpc::worldmodel
