// CFG-aware step distillation (distiller.h): a student that takes the
// guidance weight as an input samples as its guided teacher does, with one
// model call per level where the teacher makes two, at half the levels.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/distiller.h"
#include "dfmpc/worldmodel/sampler.h"
#include "dfmpc/worldmodel/trainer.h"
#include "tiny_model.h"
#include "training_fixtures.h"

namespace dfmpc::worldmodel {
namespace {

constexpr int kTokenDim = 4;
constexpr double kMaxWeight = 3.0;

DistillerOptions GuidedDistillerOptions(int steps) {
  DistillerOptions options = testing::FastDistillerOptions(steps);
  options.window = 8;
  options.validate_every = 100;
  options.max_outcome_guidance = kMaxWeight;
  return options;
}

// A tiny teacher conditioned on the leveled episodes' outcome (the outcome
// test shows its condition steering what it generates), shared below.
class GuidedDistillationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const testing::LeveledEpisodes validation = testing::MakeLeveledEpisodes(4, 20, 2);
    TransformerConfig config = testing::TinyConfig(kTokenDim);
    config.outcome_input = true;
    trainer_ = new Trainer(config, *schedule_, testing::FastTrainerOptions(300), train().tokens,
                           validation.tokens, train().rewards, validation.rewards);
    const std::string state = ::testing::TempDir() + "/dfmpc_guided_teacher.state";
    trainer_->Run(state, false, nullptr, nullptr);
    std::remove(state.c_str());
  }
  static void TearDownTestSuite() {
    delete trainer_;
    trainer_ = nullptr;
  }
  static DfTransformerImpl& teacher() { return trainer_->ema_model(); }
  static const testing::LeveledEpisodes& train() {
    static const testing::LeveledEpisodes episodes = testing::MakeLeveledEpisodes(24, 20, 1);
    return episodes;
  }

  // The mean token of 32 plans sampled from nothing at `levels` toward the
  // 0.9 quantile at guidance `weight`, and the model calls they took.
  static SampleResult Sample(DfTransformerImpl& model, int levels, double weight) {
    SampleOptions options;
    options.num_levels = levels;
    options.horizon = 8;
    options.seed = 11;
    options.target_outcome = 0.9;
    options.outcome_guidance = weight;
    torch::NoGradGuard no_grad;
    return Sampler(model, *schedule_).Generate(torch::zeros({1, 0, kTokenDim}), 32, options);
  }
  static double Level(DfTransformerImpl& model, int levels, double weight) {
    return Sample(model, levels, weight).tokens.mean().item<double>();
  }

  static inline const NoiseSchedule* schedule_ = new NoiseSchedule();
  static inline Trainer* trainer_ = nullptr;
};

TEST_F(GuidedDistillationTest, TheStudentFollowsTheGuidedTeacherInOneCallPerLevel) {
  const testing::LeveledEpisodes validation = testing::MakeLeveledEpisodes(4, 20, 2);
  Distiller distiller(teacher(), *schedule_, GuidedDistillerOptions(400), train().tokens,
                      validation.tokens);
  const double before = distiller.ValidationLoss();
  distiller.Run(nullptr, nullptr);
  const double after = distiller.ValidationLoss();
  DfTransformerImpl& student = distiller.student();
  ASSERT_TRUE(student.config().outcome_guidance_input());
  EXPECT_EQ(student.config().max_outcome_guidance, kMaxWeight);

  // The teacher's guidance moves its samples by `spread` from w = 0 to 3;
  // the student at half the levels lands near the teacher at every weight.
  const double spread = Level(teacher(), 16, kMaxWeight) - Level(teacher(), 16, 0.0);
  std::printf("distillation loss %.5f -> %.5f; teacher's guidance spread %.3f\n", before, after,
              spread);
  ASSERT_GT(spread, 0.3);
  std::vector<double> student_levels;
  for (const double weight : {0.0, 1.0, 2.0, kMaxWeight}) {
    const double reference = Level(teacher(), 16, weight);
    const double distilled = Level(student, 8, weight);
    student_levels.push_back(distilled);
    std::printf("w = %.1f: teacher at 16 levels %.3f, student at 8 %.3f\n", weight, reference,
                distilled);
    EXPECT_LT(std::abs(distilled - reference), 0.25 * spread) << weight;
  }
  for (size_t i = 1; i < student_levels.size(); ++i) {
    EXPECT_GT(student_levels[i], student_levels[i - 1]) << "the weight input steers the student";
  }
  EXPECT_LT(after, 0.5 * before);
  // One call per level at any weight; the teacher takes two off 0 and 1.
  EXPECT_EQ(Sample(student, 8, 2.0).stats.token_forwards,
            Sample(student, 8, 0.0).stats.token_forwards);
  EXPECT_EQ(Sample(teacher(), 8, 2.0).stats.token_forwards,
            2 * Sample(teacher(), 8, 0.0).stats.token_forwards);
  // A weight the student never learnt is refused.
  EXPECT_THROW(Sample(student, 8, kMaxWeight + 0.5), std::invalid_argument);

  // The student's file keeps the weight input.
  ModelInfo info;
  info.task = "pendulum_swingup";
  info.layout = TokenLayout{1, 3, /*observation_deltas=*/false};
  info.config = student.config();
  info.train_window = 8;
  const Normalizer normalizer(torch::zeros({kTokenDim}), torch::ones({kTokenDim}));
  const std::string path = ::testing::TempDir() + "/dfmpc_guided_student.pt";
  SaveCheckpoint(path, info, normalizer, student);
  Checkpoint loaded = LoadCheckpoint(path, {"pendulum_swingup", kTokenDim});
  EXPECT_EQ(loaded.info.config.max_outcome_guidance, kMaxWeight);
  EXPECT_NE(DescribeCheckpoint(loaded).find("guidance in one call"), std::string::npos);
  EXPECT_EQ(Level(*loaded.model, 8, 2.0), Level(student, 8, 2.0));
  std::remove(path.c_str());
}

TEST_F(GuidedDistillationTest, GuidanceTheTeacherCannotTeachIsRefused) {
  const testing::LeveledEpisodes data = testing::MakeLeveledEpisodes(3, 20, 4);
  auto make = [&](DfTransformerImpl& model, double max_weight) {
    DistillerOptions options = GuidedDistillerOptions(10);
    options.max_outcome_guidance = max_weight;
    Distiller distiller(model, *schedule_, options, data.tokens, data.tokens);
  };
  EXPECT_THROW(make(teacher(), 0.0), std::invalid_argument);  // how far to guide?
  EXPECT_THROW(make(teacher(), -1.0), std::invalid_argument);
  EXPECT_THROW(make(teacher(), NAN), std::invalid_argument);
  DfTransformer plain = testing::TinyModel(kTokenDim);
  EXPECT_THROW(make(*plain, 2.0), std::invalid_argument);  // nothing to guide
  // A CFG-aware teacher teaches its own range, or less.
  TransformerConfig aware_config = teacher().config();
  aware_config.max_outcome_guidance = 2.0;
  DfTransformer aware(aware_config);
  EXPECT_THROW(make(*aware, 2.5), std::invalid_argument);
  DistillerOptions own = GuidedDistillerOptions(10);
  own.max_outcome_guidance = 0.0;
  Distiller inherits(*aware, *schedule_, own, data.tokens, data.tokens);
  EXPECT_EQ(inherits.student().config().max_outcome_guidance, 2.0);
  DistillerOptions dropped = GuidedDistillerOptions(10);
  dropped.outcome_dropout = 1.0;
  EXPECT_THROW(dropped.Validate(), std::invalid_argument);
  // A config that asks for the weight input without the condition.
  TransformerConfig unconditioned = testing::TinyConfig(kTokenDim);
  unconditioned.max_outcome_guidance = 1.0;
  EXPECT_THROW(unconditioned.Validate(), std::invalid_argument);
}

TEST(GuidedOutcomeInputTest, TheWeightIsTheThirdColumnAndVanishesWithoutACondition) {
  const auto input =
      OutcomeInput(torch::full({1}, 0.75), torch::tensor({1.0, 0.0}), torch::full({1}, 2.5));
  EXPECT_TRUE(torch::equal(input, torch::tensor({{0.5f, 1.0f, 2.5f}, {0.0f, 0.0f, 0.0f}})));
  TransformerConfig config = testing::TinyConfig(kTokenDim);
  config.outcome_input = true;
  config.max_outcome_guidance = 2.0;
  DfTransformer model(config);
  torch::NoGradGuard no_grad;
  const auto tokens = torch::randn({1, 4, kTokenDim});
  const auto steps = torch::full({4}, 10, torch::kLong);
  // Two columns are another model's input.
  EXPECT_THROW(model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(),
                              OutcomeInput(torch::full({1}, 0.5), torch::ones({1}))),
               std::invalid_argument);
  EXPECT_NO_THROW(
      model->Forward(tokens, steps, nullptr, nullptr, at::Tensor(), input.narrow(0, 0, 1)));
}

}  // namespace
}  // namespace dfmpc::worldmodel
