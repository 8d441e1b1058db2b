#include "dfmpc/worldmodel/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize.h>
#include <torch/utils.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "atomic_file.h"
#include "autocast.h"
#include "dfmpc/worldmodel/device.h"
#include "process_group.h"
#include "training_loop.h"
#include "training_noise.h"
#include "training_windows.h"
#include "window_outcomes.h"

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
  at::Tensor outcome;        // [B, 2] outcome input; undefined without one
};

Batch ToDevice(const Batch& batch, c10::Device device) {
  auto move = [device](const at::Tensor& t) {
    return t.defined() ? worldmodel::ToDevice(t, device, t.scalar_type()) : t;
  };
  return Batch{move(batch.noisy),      move(batch.timesteps),     move(batch.target),
               move(batch.noisy_mask), move(batch.known_actions), move(batch.outcome)};
}

DfTransformer OnDevice(DfTransformer model, c10::Device device) {
  model->to(device);
  return model;
}

}  // namespace

void TrainerOptions::Validate() const {
  CheckWindowTrainingSettings(WindowSettingsOf(*this), "TrainerOptions");
  Require(timestep_power >= 1 && std::isfinite(timestep_power), "timestep power must be >= 1");
  Require(validate_every >= 1 && checkpoint_every >= 1,
          "validation and checkpoint intervals must be >= 1");
  Require(validation_windows >= 1, "validation windows must be >= 1");
  Require(outcome_dropout >= 0 && outcome_dropout < 1, "outcome dropout must be in [0, 1)");
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
       std::vector<at::Tensor> validation, std::vector<at::Tensor> train_rewards,
       std::vector<at::Tensor> validation_rewards)
      : config_(config),
        schedule_(schedule),
        options_(options),
        train_(std::move(train)),
        validation_(std::move(validation)),
        loop_(OnDevice(DfTransformer(config, options.seed), options.device),
              OnDevice(DfTransformer(config), options.device), WindowSettingsOf(options),
              options.validate_every, options.checkpoint_every),
        generator_(at::detail::createCPUGenerator(options.seed)) {
    options_.Validate();
    if (config.num_timesteps != schedule.num_timesteps()) {
      throw std::invalid_argument("Trainer: model and schedule disagree on timesteps");
    }
    CheckTokenSequences(train_, config_.token_dim, options_.window, "Trainer", "training");
    CheckTokenSequences(validation_, config_.token_dim, options_.window, "Trainer", "validation");
    SetOutcomes(train_rewards, validation_rewards);
    std::vector<double> alpha_bar(schedule.num_timesteps() + 1);
    for (int t = -1; t < schedule.num_timesteps(); ++t) alpha_bar[t + 1] = schedule.AlphaBar(t);
    alpha_bar_ = at::tensor(alpha_bar, at::kDouble).to(at::kFloat);
    if (options_.data_parallel.enabled()) {
      group_ = std::make_unique<ProcessGroup>(options_.data_parallel);
    }
    // Fixed validation windows and noise, from their own generator.
    at::Generator validation_generator = at::detail::createCPUGenerator(options.seed + 1);
    validation_batch_ = ToDevice(MakeBatch(validation_, validation_quantiles_,
                                           options.validation_windows, validation_generator),
                                 options.device);
  }

  void Run(const std::string& state_path, bool resume,
           const std::function<void(const TrainProgress&)>& on_progress,
           const std::function<void(const std::vector<TrainLogRow>&)>& on_log) {
    if (resume) LoadState(state_path);
    TrainingLoop::Hooks hooks;
    hooks.loss = [this](DfTransformerImpl& model) { return StepLoss(model); };
    if (group_) {
      hooks.after_backward = [this](DfTransformerImpl& model, const at::Tensor& loss) {
        return SumAcrossRanks(model, loss);
      };
    }
    hooks.validation_loss = [this](DfTransformerImpl& ema) { return Loss(ema, validation_batch_); };
    hooks.checkpoint = [this, &state_path] { SaveState(state_path); };
    hooks.writes_files = options_.data_parallel.rank == 0;
    loop_.Run(hooks, on_progress, on_log);
  }

  DfTransformerImpl& ema_model() { return loop_.ema(); }
  const std::vector<TrainLogRow>& log() const { return loop_.log(); }

  double ValidationLoss() { return Loss(loop_.ema(), validation_batch_); }

 private:
  // The outcome quantile of every window of both splits, from the rewards.
  void SetOutcomes(const std::vector<at::Tensor>& train_rewards,
                   const std::vector<at::Tensor>& validation_rewards) {
    const bool given = !train_rewards.empty() || !validation_rewards.empty();
    if (given != config_.outcome_input) {
      throw std::invalid_argument(config_.outcome_input
                                      ? "Trainer: a model with the outcome input needs the "
                                        "rewards of the training and validation sequences"
                                      : "Trainer: rewards are only for a model with the "
                                        "outcome input");
    }
    if (!given) return;
    CheckTokenRewards(train_rewards, train_, "Trainer", "training");
    CheckTokenRewards(validation_rewards, validation_, "Trainer", "validation");
    const WindowOutcomes outcomes(train_, train_rewards, options_.window,
                                  options_.outcome_baseline_neighbours,
                                  options_.outcome_state_feature);
    train_quantiles_ = outcomes.training_quantiles();
    validation_quantiles_ = outcomes.QuantilesOf(validation_, validation_rewards);
  }

  // Windows uniform over every (sequence, start) pair of `sequences`, whose
  // outcome quantiles (for a model with the outcome input) are `quantiles`.
  Batch MakeBatch(const std::vector<at::Tensor>& sequences, const std::vector<float>& quantiles,
                  int count, at::Generator& gen) const {
    std::vector<int64_t> picks;
    const at::Tensor x0 = SampleWindows(sequences, options_.window, count, gen, &picks);
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
    Batch batch{NoiseSchedule::AddNoise(x0, eps, ab),
                timesteps,
                NoiseSchedule::Target(options_.prediction, x0, eps, ab),
                (~clean).to(at::kFloat),
                at::Tensor(),
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
    if (config_.outcome_input) {  // drawn after the others too
      std::vector<float> picked;
      for (const int64_t pick : picks) picked.push_back(quantiles[pick]);
      const at::Tensor given = at::rand({count}, gen) >= options_.outcome_dropout;
      batch.outcome = OutcomeInput(at::tensor(picked), given);
    }
    return batch;
  }

  // Mean squared error over the noisy tokens of `batch`, divided by
  // `noisy_tokens` (default: the batch's own count).
  at::Tensor NoisyTokenLoss(DfTransformerImpl& model, const Batch& batch,
                            at::Tensor noisy_tokens = at::Tensor()) const {
    const at::Tensor out = model.Forward(batch.noisy, batch.timesteps, nullptr, nullptr,
                                         batch.known_actions, batch.outcome);
    const at::Tensor per_token = (out - batch.target).pow(2).mean(-1);
    if (!noisy_tokens.defined()) noisy_tokens = batch.noisy_mask.sum();
    return (per_token * batch.noisy_mask).sum() / noisy_tokens.clamp_min(1.0);
  }

  double Loss(DfTransformerImpl& ema, const Batch& batch) const {
    torch::NoGradGuard no_grad;
    return NoisyTokenLoss(ema, batch).item<double>();
  }

  // This rank's windows of a global batch.
  Batch Share(const Batch& global) const {
    if (!group_) return global;
    const int64_t size = options_.batch_size / options_.data_parallel.world_size;
    const int64_t first = options_.data_parallel.rank * size;
    auto rows = [&](const at::Tensor& t) { return t.defined() ? t.narrow(0, first, size) : t; };
    return Batch{rows(global.noisy),      rows(global.timesteps),     rows(global.target),
                 rows(global.noisy_mask), rows(global.known_actions), rows(global.outcome)};
  }

  // Every rank draws the whole global batch and trains on its share,
  // normalized by the global count: the summed gradients are then the
  // gradient of the global batch (data_parallel.h).
  at::Tensor StepLoss(DfTransformerImpl& model) {
    const Batch global = ToDevice(
        MakeBatch(train_, train_quantiles_, options_.batch_size, generator_), options_.device);
    const CudaBf16Autocast autocast(options_.mixed_precision);
    return NoisyTokenLoss(model, Share(global), global.noisy_mask.sum());
  }

  // The gradients and the loss summed over the ranks.
  at::Tensor SumAcrossRanks(DfTransformerImpl& model, const at::Tensor& loss) {
    std::vector<at::Tensor> summed;
    for (const auto& parameter : model.parameters()) {
      if (parameter.grad().defined()) summed.push_back(parameter.grad());
    }
    at::Tensor total = loss.detach().reshape({1});
    summed.push_back(total);
    group_->SumAcrossRanks(summed);
    return total;
  }

  std::string Signature() const {
    const TransformerConfig& c = config_;
    return std::to_string(c.token_dim) + "/" + std::to_string(c.width) + "/" +
           std::to_string(c.depth) + "/" + std::to_string(c.heads) + "/" +
           std::to_string(options_.batch_size) + "/" + std::to_string(options_.window) + "/" +
           std::to_string(options_.seed) +
           (options_.sensor_noise.enabled()
                ? "/sensor " + std::to_string(options_.sensor_noise.max_std)
                : "") +
           (c.outcome_input ? "/outcome " + std::to_string(options_.outcome_dropout) + " " +
                                  std::to_string(options_.outcome_baseline_neighbours)
                            : "");
  }

  void SaveState(const std::string& path) {
    torch::serialize::OutputArchive archive;
    archive.write("signature", c10::IValue(Signature()));
    archive.write("generator", generator_.get_state());
    loop_.Save(archive);
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
      c10::IValue signature;
      archive.read("signature", signature);
      if (signature.toStringRef() != Signature()) {
        throw std::runtime_error("cannot resume from " + path +
                                 ": it was written with other model or training options (" +
                                 signature.toStringRef() + " vs " + Signature() + ")");
      }
      at::Tensor generator_state;
      archive.read("generator", generator_state);
      loop_.Load(archive);
      generator_.set_state(generator_state);
    } catch (const c10::Error& e) {
      throw std::runtime_error("cannot resume from " + path + ": truncated or corrupt state (" +
                               e.what_without_backtrace() + ")");
    }
  }

  TransformerConfig config_;
  const NoiseSchedule& schedule_;
  TrainerOptions options_;
  std::vector<at::Tensor> train_, validation_;
  // Each window's outcome quantile (WindowOutcomes), with the outcome input.
  std::vector<float> train_quantiles_, validation_quantiles_;
  TrainingLoop loop_;
  at::Generator generator_;
  at::Tensor alpha_bar_;  // [T + 1], index t + 1
  Batch validation_batch_;
  std::unique_ptr<ProcessGroup> group_;  // data-parallel training only
};

Trainer::Trainer(const TransformerConfig& config, const NoiseSchedule& schedule,
                 const TrainerOptions& options, std::vector<at::Tensor> train,
                 std::vector<at::Tensor> validation, std::vector<at::Tensor> train_rewards,
                 std::vector<at::Tensor> validation_rewards)
    : impl_(std::make_unique<Impl>(config, schedule, options, std::move(train),
                                   std::move(validation), std::move(train_rewards),
                                   std::move(validation_rewards))) {}

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
