#include "dfmpc/worldmodel/distiller.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "training_loop.h"
#include "training_windows.h"

namespace dfmpc::worldmodel {
namespace {

void Require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("DistillerOptions: " + what);
}

// Noisy windows and what the student should output for them.
struct DistillationBatch {
  at::Tensor noisy;          // [B, L, d] at the student's levels
  at::Tensor timesteps;      // [B, L] of those levels
  at::Tensor target;         // [B, L, d]
  at::Tensor noisy_mask;     // [B, L] float: 1 where the token is not clean
  at::Tensor known_actions;  // [B, L, a + 1] side input; undefined without one
  at::Tensor outcome;        // [B, 3] the student's outcome input; undefined without one
};

// The guidance a batch's windows are distilled at (conditioned teachers).
struct GuidanceDraw {
  at::Tensor quantiles;  // [B] target outcome quantiles
  at::Tensor given;      // [B] float: 0 where the window has no condition
  at::Tensor weights;    // [B] guidance weights
};

// [count, window] int64 levels of a `levels`-level grid: 0 (clean) with
// probability clean_prob else uniform in 1..levels, or, for a fraction
// pyramid_prob of the windows, a clean prefix of random length and then
// levels rising from a random start by a random slope below one level per
// token, capped at `levels`.
at::Tensor StudentLevels(int64_t count, int64_t window, int64_t levels, double clean_prob,
                         double pyramid_prob, at::Generator& gen) {
  const at::Tensor drawn = at::randint(1, levels + 1, {count, window}, gen, at::kLong);
  const at::Tensor clean = at::rand({count, window}, gen) < clean_prob;
  const at::Tensor independent = at::where(clean, at::zeros_like(drawn), drawn);
  const at::Tensor prefix = at::randint(window, {count, 1}, gen, at::kLong);
  const at::Tensor start = at::randint(1, levels + 1, {count, 1}, gen, at::kLong);
  const at::Tensor slope = at::rand({count, 1}, gen, at::kDouble);
  const at::Tensor offset = at::arange(window, at::kLong).unsqueeze(0) - prefix;
  const at::Tensor rising =
      (start + (offset.to(at::kDouble) * slope).floor().to(at::kLong)).clamp_max(levels);
  const at::Tensor pyramid = at::where(offset < 0, at::zeros_like(rising), rising);
  const at::Tensor use_pyramid = at::rand({count, 1}, gen) < pyramid_prob;
  return at::where(use_pyramid, pyramid, independent);
}

// A student of `config` that starts as the teacher: a guidance-weight
// column the teacher lacks starts at zero.
DfTransformer StudentOf(DfTransformerImpl& teacher, const TransformerConfig& config) {
  DfTransformer student(config);
  torch::NoGradGuard no_grad;
  const auto source = teacher.named_parameters();
  for (auto& target : student->named_parameters()) {
    const at::Tensor& from = source[target.key()];
    if (from.sizes() == target.value().sizes()) {
      target.value().copy_(from);
    } else {  // outcome_input.weight: [width, 2] into [width, 3]
      target.value().zero_();
      target.value().narrow(1, 0, from.size(1)).copy_(from);
    }
  }
  return student;
}

// The student's config: the teacher's, taking the guidance weight up to
// `options.max_outcome_guidance` where the teacher is conditioned.
// Checks the options first: the distiller builds its student from them.
TransformerConfig StudentConfig(const TransformerConfig& teacher, const DistillerOptions& options) {
  options.Validate();
  const double asked = options.max_outcome_guidance;
  if (!teacher.outcome_input) {
    if (asked > 0.0) {
      throw std::invalid_argument(
          "Distiller: max_outcome_guidance needs an outcome-conditioned teacher (dfmpc train "
          "--outcome-condition)");
    }
    return teacher;
  }
  TransformerConfig student = teacher;
  if (teacher.outcome_guidance_input()) {
    if (asked > teacher.max_outcome_guidance) {
      throw std::invalid_argument("Distiller: the teacher takes guidance weights up to " +
                                  std::to_string(teacher.max_outcome_guidance) +
                                  "; it cannot teach " + std::to_string(asked));
    }
    if (asked > 0.0) student.max_outcome_guidance = asked;
    return student;
  }
  if (asked == 0.0) {
    throw std::invalid_argument(
        "Distiller: the teacher is outcome-conditioned; give max_outcome_guidance, the largest "
        "guidance weight the student will take as an input (dfmpc distill "
        "--max-outcome-guidance)");
  }
  student.max_outcome_guidance = asked;
  return student;
}

}  // namespace

void DistillerOptions::Validate() const {
  Require(teacher_levels >= 2 && teacher_levels % 2 == 0,
          "the teacher's levels must be even and >= 2, got " + std::to_string(teacher_levels));
  CheckWindowTrainingSettings(WindowSettingsOf(*this), "DistillerOptions");
  Require(validate_every >= 1, "validation interval must be >= 1");
  Require(validation_windows >= 1, "validation windows must be >= 1");
  Require(std::isfinite(max_outcome_guidance) && max_outcome_guidance >= 0.0,
          "max_outcome_guidance must be finite and >= 0");
  Require(outcome_dropout >= 0.0 && outcome_dropout < 1.0, "outcome dropout must be in [0, 1)");
}

at::Tensor DistillationTarget(Prediction prediction, const at::Tensor& x_from,
                              const at::Tensor& x_to, const at::Tensor& ab_from,
                              const at::Tensor& ab_to) {
  // A deterministic DDIM step is x_to = a' x0 + s' (x_from - a x0) / s
  // (a = sqrt(ab), s = sqrt(1 - ab)); solved for x0. The denominator
  // a' - s' a / s is positive because the signal-to-noise ratio rises
  // towards clean.
  const at::Tensor signal = ab_from.sqrt();
  const at::Tensor sigma = (1.0 - ab_from).sqrt();
  const at::Tensor ratio = (1.0 - ab_to).sqrt() / sigma;
  const at::Tensor x0 = (x_to - ratio * x_from) / (ab_to.sqrt() - ratio * signal);
  const at::Tensor eps = (x_from - signal * x0) / sigma;
  return NoiseSchedule::Target(prediction, x0, eps, ab_from);
}

class Distiller::Impl {
 public:
  Impl(DfTransformerImpl& teacher, const NoiseSchedule& schedule, const DistillerOptions& options,
       std::vector<at::Tensor> train, std::vector<at::Tensor> validation)
      : teacher_(teacher),
        schedule_(schedule),
        options_(options),
        train_(std::move(train)),
        validation_(std::move(validation)),
        student_config_(StudentConfig(teacher.config(), options)),
        loop_(StudentOf(teacher, student_config_), DfTransformer(student_config_),
              WindowSettingsOf(options), options.validate_every, /*checkpoint_every=*/0),
        generator_(at::detail::createCPUGenerator(options.seed)) {
    const TransformerConfig& config = teacher.config();
    if (config.num_timesteps != schedule.num_timesteps()) {
      throw std::invalid_argument("Distiller: model and schedule disagree on timesteps");
    }
    if (options_.teacher_levels > schedule.num_timesteps()) {
      throw std::invalid_argument("Distiller: the teacher's " +
                                  std::to_string(options_.teacher_levels) +
                                  " levels exceed the schedule's " +
                                  std::to_string(schedule.num_timesteps()) + " timesteps");
    }
    if (options_.window > config.max_positions) {
      throw std::invalid_argument("Distiller: a window of " + std::to_string(options_.window) +
                                  " tokens exceeds the model's " +
                                  std::to_string(config.max_positions) + " positions");
    }
    CheckTokenSequences(train_, config.token_dim, options_.window, "Distiller", "training");
    CheckTokenSequences(validation_, config.token_dim, options_.window, "Distiller", "validation");
    const c10::Device device = teacher.parameters().front().device();
    if (!device.is_cpu()) {
      throw std::invalid_argument("Distiller: the teacher must be on the CPU, it is on " +
                                  device.str());
    }
    std::vector<double> alpha_bar(schedule.num_timesteps() + 1);
    for (int t = -1; t < schedule.num_timesteps(); ++t) alpha_bar[t + 1] = schedule.AlphaBar(t);
    alpha_bar_ = at::tensor(alpha_bar, at::kDouble).to(at::kFloat);
    at::Generator validation_generator = at::detail::createCPUGenerator(options.seed + 1);
    validation_batch_ = MakeBatch(validation_, options.validation_windows, validation_generator);
  }

  void Run(const std::function<void(const TrainProgress&)>& on_progress,
           const std::function<void(const std::vector<TrainLogRow>&)>& on_log) {
    TrainingLoop::Hooks hooks;
    hooks.loss = [this](DfTransformerImpl& model) {
      return Loss(model, MakeBatch(train_, options_.batch_size, generator_));
    };
    hooks.validation_loss = [this](DfTransformerImpl&) { return ValidationLoss(); };
    loop_.Run(hooks, on_progress, on_log);
  }

  double ValidationLoss() {
    torch::NoGradGuard no_grad;
    return Loss(loop_.ema(), validation_batch_).item<double>();
  }

  DfTransformerImpl& student() { return loop_.ema(); }
  const std::vector<TrainLogRow>& log() const { return loop_.log(); }

 private:
  // Training timesteps of teacher levels `levels` (0: clean, -1).
  at::Tensor TeacherTimesteps(const at::Tensor& levels) const {
    return at::div(levels * schedule_.num_timesteps(), options_.teacher_levels, "floor") - 1;
  }

  at::Tensor AlphaBar(const at::Tensor& timesteps) const {
    return alpha_bar_.index_select(0, (timesteps + 1).flatten()).view_as(timesteps).unsqueeze(-1);
  }

  // The teacher's output at `guidance` (undefined: unconditioned teacher).
  at::Tensor TeacherOutput(const at::Tensor& x, const at::Tensor& timesteps,
                           const at::Tensor& known_actions, const GuidanceDraw* guidance) const {
    const auto call = [&](const at::Tensor& outcome) {
      return teacher_.Forward(x, timesteps, nullptr, nullptr, known_actions, outcome);
    };
    if (guidance == nullptr) return call(at::Tensor());
    if (teacher_.config().outcome_guidance_input()) {
      return call(OutcomeInput(guidance->quantiles, guidance->given, guidance->weights));
    }
    // Where no condition is given the conditioned call adds nothing, so the
    // lerp gives the unconditioned output whatever the weight.
    const at::Tensor unconditioned = call(at::Tensor());
    const at::Tensor conditioned = call(OutcomeInput(guidance->quantiles, guidance->given));
    return unconditioned + guidance->weights.view({-1, 1, 1}) * (conditioned - unconditioned);
  }

  // One deterministic teacher step of every token from timesteps `from` to
  // `to`; tokens with from == to (clean) are kept.
  at::Tensor TeacherStep(const at::Tensor& x, const at::Tensor& from, const at::Tensor& to,
                         const at::Tensor& known_actions, const GuidanceDraw* guidance) const {
    const at::Tensor ab_from = AlphaBar(from);
    at::Tensor x0, eps;
    NoiseSchedule::ToX0AndEps(options_.prediction, x,
                              TeacherOutput(x, from, known_actions, guidance), ab_from, &x0, &eps);
    const at::Tensor stepped = NoiseSchedule::DdimStep(x0, eps, ab_from, AlphaBar(to), 0.0, {});
    return at::where((from > to).unsqueeze(-1), stepped, x);
  }

  DistillationBatch MakeBatch(const std::vector<at::Tensor>& sequences, int count,
                              at::Generator& gen) const {
    const at::Tensor x0 = SampleWindows(sequences, options_.window, count, gen);
    const at::Tensor levels = StudentLevels(count, options_.window, options_.teacher_levels / 2,
                                            options_.clean_prob, options_.pyramid_prob, gen);
    const at::Tensor eps = at::randn(x0.sizes(), gen, at::kFloat);
    const at::Tensor noisy_mask = levels > 0;
    const at::Tensor from = TeacherTimesteps(2 * levels);
    const at::Tensor middle = TeacherTimesteps((2 * levels - 1).clamp_min(0));
    const at::Tensor to = TeacherTimesteps((2 * levels - 2).clamp_min(0));
    const at::Tensor noisy = NoiseSchedule::AddNoise(x0, eps, AlphaBar(from));
    const int64_t actions = teacher_.config().action_input_dim;
    at::Tensor known_actions;
    if (actions > 0) {
      const at::Tensor known =
          (at::rand({count, options_.window, 1}, gen) < options_.known_action_prob).to(at::kFloat);
      known_actions = KnownActionInput(x0.narrow(2, 0, actions), known);
    }
    std::optional<GuidanceDraw> guidance;
    at::Tensor outcome;
    if (student_config_.outcome_input) {  // drawn after the others
      guidance = GuidanceDraw{at::rand({count}, gen),
                              (at::rand({count}, gen) >= options_.outcome_dropout).to(at::kFloat),
                              at::rand({count}, gen) * student_config_.max_outcome_guidance};
      outcome = OutcomeInput(guidance->quantiles, guidance->given, guidance->weights);
    }
    const GuidanceDraw* guided = guidance ? &*guidance : nullptr;
    at::Tensor landed;
    {
      torch::NoGradGuard no_grad;
      teacher_.eval();
      landed = TeacherStep(TeacherStep(noisy, from, middle, known_actions, guided), middle, to,
                           known_actions, guided);
    }
    // Clean tokens (ab_from = 1) have no target; they are masked out of the
    // loss, and a finite stand-in keeps NaN out of its sum.
    const at::Tensor target = at::where(
        noisy_mask.unsqueeze(-1),
        DistillationTarget(options_.prediction, noisy, landed, AlphaBar(from), AlphaBar(to)),
        at::zeros_like(noisy));
    return DistillationBatch{noisy,         from,   target, noisy_mask.to(at::kFloat),
                             known_actions, outcome};
  }

  at::Tensor Loss(DfTransformerImpl& model, const DistillationBatch& batch) const {
    const at::Tensor out = model.Forward(batch.noisy, batch.timesteps, nullptr, nullptr,
                                         batch.known_actions, batch.outcome);
    const at::Tensor per_token = (out - batch.target).pow(2).mean(-1);
    return (per_token * batch.noisy_mask).sum() / batch.noisy_mask.sum().clamp_min(1.0);
  }

  DfTransformerImpl& teacher_;
  const NoiseSchedule& schedule_;
  DistillerOptions options_;
  std::vector<at::Tensor> train_, validation_;
  TransformerConfig student_config_;
  TrainingLoop loop_;
  at::Generator generator_;
  at::Tensor alpha_bar_;  // [T + 1], index t + 1
  DistillationBatch validation_batch_;
};

Distiller::Distiller(DfTransformerImpl& teacher, const NoiseSchedule& schedule,
                     const DistillerOptions& options, std::vector<at::Tensor> train,
                     std::vector<at::Tensor> validation)
    : impl_(std::make_unique<Impl>(teacher, schedule, options, std::move(train),
                                   std::move(validation))) {}

Distiller::~Distiller() = default;

void Distiller::Run(const std::function<void(const TrainProgress&)>& on_progress,
                    const std::function<void(const std::vector<TrainLogRow>&)>& on_log) {
  impl_->Run(on_progress, on_log);
}

double Distiller::ValidationLoss() { return impl_->ValidationLoss(); }
DfTransformerImpl& Distiller::student() { return impl_->student(); }
const std::vector<TrainLogRow>& Distiller::log() const { return impl_->log(); }

}  // namespace dfmpc::worldmodel
