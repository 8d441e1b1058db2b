#include "dfmpc/worldmodel/distiller.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/trainer.h"
#include "tiny_model.h"
#include "training_fixtures.h"

namespace dfmpc::worldmodel {
namespace {

using testing::FastDistillerOptions;
using testing::OscillatorEpisodes;

TEST(DistillationTargetTest, OneStepFromTheTargetLandsOnTheGivenPoint) {
  torch::manual_seed(0);
  const at::Tensor x_from = torch::randn({3, 5, 4});
  const at::Tensor x_to = torch::randn({3, 5, 4});
  // Per token: from noisier to less noisy, the last token to clean.
  const at::Tensor ab_from = torch::tensor({0.001, 0.2, 0.5, 0.7, 0.9}).view({1, 5, 1});
  const at::Tensor ab_to = torch::tensor({0.05, 0.4, 0.8, 0.95, 1.0}).view({1, 5, 1});
  for (const Prediction prediction : {Prediction::kV, Prediction::kX0, Prediction::kEps}) {
    SCOPED_TRACE(PredictionName(prediction));
    const at::Tensor target = DistillationTarget(prediction, x_from, x_to, ab_from, ab_to);
    at::Tensor x0, eps;
    NoiseSchedule::ToX0AndEps(prediction, x_from, target, ab_from, &x0, &eps);
    const at::Tensor landed = NoiseSchedule::DdimStep(x0, eps, ab_from, ab_to, 0.0, {});
    // Float arithmetic on values of order 1 divided by at most ~0.03: 1e-4.
    EXPECT_LT((landed - x_to).abs().max().item<double>(), 1e-4);
  }
}

// A tiny teacher that has learnt the oscillator (the trainer's own test
// shows its loss falling), shared by the tests below.
class DistillerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TrainerOptions options = testing::FastTrainerOptions(400);
    options.window = 12;
    options.validate_every = options.checkpoint_every = 400;
    trainer_ = new Trainer(testing::TinyConfig(4), *schedule_, options,
                           OscillatorEpisodes(12, 60, 1), OscillatorEpisodes(3, 60, 2));
    trainer_->Run(::testing::TempDir() + "/dfmpc_distiller_teacher.state", false, nullptr, nullptr);
    std::remove((::testing::TempDir() + "/dfmpc_distiller_teacher.state").c_str());
  }
  static void TearDownTestSuite() {
    delete trainer_;
    trainer_ = nullptr;
  }
  static DfTransformerImpl& teacher() { return trainer_->ema_model(); }

  // Mean squared difference between `model` sampling at `levels` and the
  // teacher at 16, from the same noise and the same context.
  static double GapToTeacher(DfTransformerImpl& model, int levels) {
    const at::Tensor context = OscillatorEpisodes(1, 4, 9)[0].unsqueeze(0);
    SampleOptions options;
    options.horizon = 8;
    options.seed = 11;
    const Sampler teacher_sampler(teacher(), *schedule_);
    const at::Tensor reference = teacher_sampler.Generate(context, 32, options).tokens;
    options.num_levels = levels;
    const Sampler sampler(model, *schedule_);
    return (sampler.Generate(context, 32, options).tokens - reference).pow(2).mean().item<double>();
  }

  static inline const NoiseSchedule* schedule_ = new NoiseSchedule();
  static inline Trainer* trainer_ = nullptr;
};

TEST_F(DistillerTest, ATinyRunBringsTheStudentsSamplesCloserToTheTeachers) {
  Distiller distiller(teacher(), *schedule_, FastDistillerOptions(300),
                      OscillatorEpisodes(12, 60, 1), OscillatorEpisodes(3, 60, 2));
  const double before = distiller.ValidationLoss();
  const double undistilled_gap = GapToTeacher(teacher(), 8);
  distiller.Run(nullptr, nullptr);
  const double after = distiller.ValidationLoss();
  const double distilled_gap = GapToTeacher(distiller.student(), 8);
  std::printf(
      "distillation loss %.5f -> %.5f; gap to the teacher at K = 16: teacher at 8 "
      "%.5f, student at 8 %.5f\n",
      before, after, undistilled_gap, distilled_gap);
  // Before Run the student is the teacher: its loss is the teacher's own
  // error in taking two levels at once.
  EXPECT_LT(after, 0.5 * before);                   // measured 0.09x
  EXPECT_LT(distilled_gap, 0.5 * undistilled_gap);  // measured 0.13x
  ASSERT_EQ(distiller.log().size(), 6u);
  EXPECT_EQ(distiller.log().back().step, 300);
}

TEST_F(DistillerTest, ImpossibleOptionsAndDataAreRefused) {
  const auto episodes = OscillatorEpisodes(3, 30, 1);
  auto make = [&](const DistillerOptions& options, std::vector<at::Tensor> train) {
    Distiller distiller(teacher(), *schedule_, options, std::move(train), episodes);
  };
  DistillerOptions odd = FastDistillerOptions(10);
  odd.teacher_levels = 7;
  EXPECT_THROW(make(odd, episodes), std::invalid_argument);
  DistillerOptions too_many = FastDistillerOptions(10);
  too_many.teacher_levels = 2000;
  EXPECT_THROW(make(too_many, episodes), std::invalid_argument);
  DistillerOptions too_long = FastDistillerOptions(10);
  too_long.window = 129;  // the tiny model has 128 positions
  EXPECT_THROW(make(too_long, episodes), std::invalid_argument);
  at::Tensor with_nan = episodes[0].clone();
  with_nan[3][1] = NAN;
  EXPECT_THROW(make(FastDistillerOptions(10), {with_nan}), std::invalid_argument);
  EXPECT_THROW(make(FastDistillerOptions(10), {torch::zeros({30, 5})}), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
