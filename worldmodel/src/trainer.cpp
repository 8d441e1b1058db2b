#include "dfmpc/worldmodel/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "atomic_file.h"
#include "autocast.h"
#include "dfmpc/worldmodel/device.h"
#include "learning_rate.h"
#include "process_group.h"
#include "training_noise.h"
#include "training_windows.h"

namespace dfmpc::worldmodel {
namespace {

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("TrainerOptions: " + what);
}

// A batch of noisy training windows and what the model should predict.
struct Batch {
  at::Tensor noisy;          // [B, L, d]
  at::Tensor timesteps;      // [B, L] in [-1, T-1]
  at::Tensor target;         // [B, L, d]
  at::Tensor noisy_mask;     // [B, L] float: 1 where the token is not clean
  at::Tensor known_actions;  // [B, L, a + 1] side input; undefined without one
};

Batch ToDevice(const Batch& batch, c10::Device device) {
  auto move = [device](const at::Tensor& t) {
    return t.defined() ? worldmodel::ToDevice(t, device, t.scalar_type()) : t;
  };
  return Batch{move(batch.noisy), move(batch.timesteps), move(batch.target),
               move(batch.noisy_mask), move(batch.known_actions)};
}

DfTransformer OnDevice(DfTransformer model, c10::Device device) {
  model->to(device);
  return model;
}

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

void TrainerOptions::Validate() const {
  CheckWindowTrainingSettings(
      {steps, batch_size, window, learning_rate, min_learning_rate_ratio, warmup_steps,
       weight_decay, grad_clip, ema_decay, clean_prob, pyramid_prob, known_action_prob},
      "TrainerOptions");
  Require(timestep_power >= 1 && std::isfinite(timestep_power), "timestep power must be >= 1");
  Require(validate_every >= 1 && checkpoint_every >= 1,
          "validation and checkpoint intervals must be >= 1");
  Require(validation_windows >= 1, "validation windows must be >= 1");
  Require(!mixed_precision || device.is_cuda(),
          "mixed precision (bf16 autocast) needs a CUDA device");
  data_parallel.Validate();
  Require(batch_size % data_parallel.world_size == 0,
          "the batch of " + std::to_string(batch_size) + " windows does not split evenly over " +
              std::to_string(data_parallel.world_size) + " processes");
  sensor_noise.Validate();
}

class Trainer::Impl {
 public:
  Impl(const TransformerConfig& config, const NoiseSchedule& schedule,
       const TrainerOptions& options, std::vector<at::Tensor> train,
       std::vector<at::Tensor> validation)
      : config_(config),
        schedule_(schedule),
        options_(options),
        train_(std::move(train)),
        validation_(std::move(validation)),
        model_(OnDevice(DfTransformer(config, options.seed), options.device)),
        ema_(OnDevice(DfTransformer(config), options.device)),
        optimizer_(
            model_->parameters(),
            torch::optim::AdamWOptions(options.learning_rate).weight_decay(options.weight_decay)),
        generator_(at::detail::createCPUGenerator(options.seed)) {
    options_.Validate();
    if (config.num_timesteps != schedule.num_timesteps()) {
      throw std::invalid_argument("Trainer: model and schedule disagree on timesteps");
    }
    CheckTokenSequences(train_, config_.token_dim, options_.window, "Trainer", "training");
    CheckTokenSequences(validation_, config_.token_dim, options_.window, "Trainer", "validation");
    std::vector<double> alpha_bar(schedule.num_timesteps() + 1);
    for (int t = -1; t < schedule.num_timesteps(); ++t) alpha_bar[t + 1] = schedule.AlphaBar(t);
    alpha_bar_ = at::tensor(alpha_bar, at::kDouble).to(at::kFloat);
    CopyWeights(*model_, *ema_);
    ema_->eval();
    if (options_.data_parallel.enabled()) {
      group_ = std::make_unique<ProcessGroup>(options_.data_parallel);
    }
    // Fixed validation windows and noise, from their own generator.
    at::Generator validation_generator = at::detail::createCPUGenerator(options.seed + 1);
    validation_batch_ = ToDevice(
        MakeBatch(validation_, options.validation_windows, validation_generator), options.device);
  }

  void Run(const std::string& state_path, bool resume,
           const std::function<void(const TrainProgress&)>& on_progress,
           const std::function<void(const std::vector<TrainLogRow>&)>& on_log) {
    if (resume) LoadState(state_path);
    auto window_start = std::chrono::steady_clock::now();
    int window_steps = 0;
    while (step_ < options_.steps) {
      const double loss = TrainStep();
      ++step_;
      ++window_steps;
      loss_sum_ += loss;
      ++loss_count_;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start).count();
      const double tokens_per_second =
          window_steps * options_.batch_size * options_.window / std::max(seconds, 1e-9);
      if (on_progress) {
        on_progress({step_, options_.steps, loss_sum_ / loss_count_, tokens_per_second});
      }
      if (step_ % options_.validate_every == 0 || step_ == options_.steps) {
        log_.push_back({step_, loss_sum_ / loss_count_, ValidationLoss(), LearningRate(step_ - 1),
                        tokens_per_second});
        loss_sum_ = 0.0;
        loss_count_ = 0;
        if (on_log && WritesFiles()) on_log(log_);
      }
      if ((step_ % options_.checkpoint_every == 0 || step_ == options_.steps) && WritesFiles()) {
        SaveState(state_path);
      }
    }
  }

  DfTransformerImpl& ema_model() { return *ema_; }
  const std::vector<TrainLogRow>& log() const { return log_; }

  double ValidationLoss() {
    torch::NoGradGuard no_grad;
    return Loss(*ema_, validation_batch_).item<double>();
  }

 private:
  // Windows uniform over every (sequence, start) pair of `sequences`.
  Batch MakeBatch(const std::vector<at::Tensor>& sequences, int count, at::Generator& gen) const {
    const at::Tensor x0 = SampleWindows(sequences, options_.window, count, gen);
    // Named draws: argument evaluation order must not decide the numbers.
    const int64_t steps = schedule_.num_timesteps();
    const at::Tensor independent = IndependentTimesteps(
        count, options_.window, steps, options_.clean_prob, options_.timestep_power, gen);
    const at::Tensor pyramid = PyramidTimesteps(count, options_.window, steps, gen);
    const at::Tensor use_pyramid = at::rand({count, 1}, gen) < options_.pyramid_prob;
    const at::Tensor timesteps = at::where(use_pyramid, pyramid, independent);
    const at::Tensor clean = timesteps < 0;
    const at::Tensor eps = at::randn(x0.sizes(), gen, at::kFloat);
    const at::Tensor ab =
        alpha_bar_.index_select(0, (timesteps + 1).flatten()).view({count, options_.window, 1});
    Batch batch{NoiseSchedule::AddNoise(x0, eps, ab), timesteps,
                NoiseSchedule::Target(options_.prediction, x0, eps, ab), (~clean).to(at::kFloat),
                at::Tensor()};
    if (config_.action_input_dim > 0) {  // drawn last: runs without it keep their numbers
      const at::Tensor known =
          (at::rand({count, options_.window, 1}, gen) < options_.known_action_prob).to(at::kFloat);
      batch.known_actions = KnownActionInput(x0.narrow(2, 0, config_.action_input_dim), known);
    }
    if (options_.sensor_noise.enabled()) {  // also drawn after the others
      const at::Tensor stds = at::rand({count}, gen, at::kDouble) * options_.sensor_noise.max_std;
      const at::Tensor read = AddSensorNoise(options_.sensor_noise, x0, stds, gen);
      batch.noisy = at::where(clean.unsqueeze(-1), read, batch.noisy);
    }
    return batch;
  }

  // Mean squared error over the noisy tokens of `batch`, divided by
  // `noisy_tokens` (default: the batch's own count).
  at::Tensor Loss(DfTransformerImpl& model, const Batch& batch,
                  at::Tensor noisy_tokens = at::Tensor()) const {
    const at::Tensor out =
        model.Forward(batch.noisy, batch.timesteps, nullptr, nullptr, batch.known_actions);
    const at::Tensor per_token = (out - batch.target).pow(2).mean(-1);
    if (!noisy_tokens.defined()) noisy_tokens = batch.noisy_mask.sum();
    return (per_token * batch.noisy_mask).sum() / noisy_tokens.clamp_min(1.0);
  }

  // Rank 0 (or a process training alone) writes the state and the model.
  bool WritesFiles() const { return options_.data_parallel.rank == 0; }

  // This rank's windows of a global batch.
  Batch Share(const Batch& global) const {
    if (!group_) return global;
    const int64_t size = options_.batch_size / options_.data_parallel.world_size;
    const int64_t first = options_.data_parallel.rank * size;
    auto rows = [&](const at::Tensor& t) { return t.defined() ? t.narrow(0, first, size) : t; };
    return Batch{rows(global.noisy), rows(global.timesteps), rows(global.target),
                 rows(global.noisy_mask), rows(global.known_actions)};
  }

  double LearningRate(int step) const {
    return WarmupCosineLearningRate(step, options_.steps, options_.warmup_steps,
                                    options_.learning_rate, options_.min_learning_rate_ratio);
  }

  double TrainStep() {
    model_->train();
    // Every rank draws the whole global batch and trains on its share,
    // normalized by the global count: the summed gradients are then the
    // gradient of the global batch (data_parallel.h).
    const Batch global =
        ToDevice(MakeBatch(train_, options_.batch_size, generator_), options_.device);
    const Batch batch = Share(global);
    for (auto& group : optimizer_.param_groups()) {
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(LearningRate(step_));
    }
    optimizer_.zero_grad();
    at::Tensor loss;
    {
      const CudaBf16Autocast autocast(options_.mixed_precision);
      loss = Loss(*model_, batch, global.noisy_mask.sum());
    }
    loss.backward();
    if (group_) {
      std::vector<at::Tensor> summed;
      for (const auto& parameter : model_->parameters()) {
        if (parameter.grad().defined()) summed.push_back(parameter.grad());
      }
      loss = loss.detach().reshape({1});
      summed.push_back(loss);
      group_->SumAcrossRanks(summed);
    }
    torch::nn::utils::clip_grad_norm_(model_->parameters(), options_.grad_clip);
    optimizer_.step();
    UpdateEma(*ema_, *model_, options_.ema_decay, step_);
    return loss.item<double>();
  }

  std::string Signature() const {
    const TransformerConfig& c = config_;
    return std::to_string(c.token_dim) + "/" + std::to_string(c.width) + "/" +
           std::to_string(c.depth) + "/" + std::to_string(c.heads) + "/" +
           std::to_string(options_.batch_size) + "/" + std::to_string(options_.window) + "/" +
           std::to_string(options_.seed) +
           (options_.sensor_noise.enabled()
                ? "/sensor " + std::to_string(options_.sensor_noise.max_std)
                : "");
  }

  void SaveState(const std::string& path) {
    torch::serialize::OutputArchive archive;
    archive.write("signature", c10::IValue(Signature()));
    archive.write("step", c10::IValue(static_cast<int64_t>(step_)));
    archive.write("loss_sum", c10::IValue(loss_sum_));
    archive.write("loss_count", c10::IValue(static_cast<int64_t>(loss_count_)));
    archive.write("generator", generator_.get_state());
    archive.write("log", LogToTensor(log_));
    torch::serialize::OutputArchive model, ema, optimizer;
    model_->save(model);
    ema_->save(ema);
    optimizer_.save(optimizer);
    archive.write("model", model);
    archive.write("ema", ema);
    archive.write("optimizer", optimizer);
    std::ostringstream bytes;
    archive.save_to(bytes);
    internal::WriteFileAtomically(path, bytes.str());
  }

  void LoadState(const std::string& path) {
    if (!std::ifstream(path).good()) {
      throw std::runtime_error("cannot resume: no training state at " + path);
    }
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(path, options_.device);
      c10::IValue signature, step, loss_sum, loss_count;
      archive.read("signature", signature);
      if (signature.toStringRef() != Signature()) {
        throw std::runtime_error("cannot resume from " + path +
                                 ": it was written with other model or training options (" +
                                 signature.toStringRef() + " vs " + Signature() + ")");
      }
      archive.read("step", step);
      archive.read("loss_sum", loss_sum);
      archive.read("loss_count", loss_count);
      at::Tensor generator_state, log;
      archive.read("generator", generator_state);
      archive.read("log", log);
      torch::serialize::InputArchive model, ema, optimizer;
      archive.read("model", model);
      archive.read("ema", ema);
      archive.read("optimizer", optimizer);
      model_->load(model);
      ema_->load(ema);
      optimizer_.load(optimizer);
      generator_.set_state(generator_state);
      step_ = static_cast<int>(step.toInt());
      loss_sum_ = loss_sum.toDouble();
      loss_count_ = static_cast<int>(loss_count.toInt());
      log_ = LogFromTensor(log);
    } catch (const c10::Error& e) {
      throw std::runtime_error("cannot resume from " + path + ": truncated or corrupt state (" +
                               e.what_without_backtrace() + ")");
    }
  }

  TransformerConfig config_;
  const NoiseSchedule& schedule_;
  TrainerOptions options_;
  std::vector<at::Tensor> train_, validation_;
  DfTransformer model_, ema_;
  torch::optim::AdamW optimizer_;
  at::Generator generator_;
  at::Tensor alpha_bar_;  // [T + 1], index t + 1
  Batch validation_batch_;
  std::unique_ptr<ProcessGroup> group_;  // data-parallel training only
  int step_ = 0;
  double loss_sum_ = 0.0;
  int loss_count_ = 0;
  std::vector<TrainLogRow> log_;
};

Trainer::Trainer(const TransformerConfig& config, const NoiseSchedule& schedule,
                 const TrainerOptions& options, std::vector<at::Tensor> train,
                 std::vector<at::Tensor> validation)
    : impl_(std::make_unique<Impl>(config, schedule, options, std::move(train),
                                   std::move(validation))) {}

Trainer::~Trainer() = default;

void Trainer::Run(const std::string& state_path, bool resume,
                  const std::function<void(const TrainProgress&)>& on_progress,
                  const std::function<void(const std::vector<TrainLogRow>&)>& on_log) {
  impl_->Run(state_path, resume, on_progress, on_log);
}

double Trainer::ValidationLoss() { return impl_->ValidationLoss(); }
DfTransformerImpl& Trainer::ema_model() { return impl_->ema_model(); }
const std::vector<TrainLogRow>& Trainer::log() const { return impl_->log(); }

}  // namespace dfmpc::worldmodel
