#include "dfmpc/worldmodel/trainer.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tiny_model.h"
#include "training_fixtures.h"

namespace dfmpc::worldmodel {
namespace {

using testing::FastTrainerOptions;
using testing::OscillatorEpisodes;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/dfmpc_trainer_" + name;
}

TEST(TrainerTest, ValidationLossFallsClearlyBelowItsStart) {
  const NoiseSchedule schedule;
  Trainer trainer(testing::TinyConfig(4), schedule, FastTrainerOptions(300),
                  OscillatorEpisodes(12, 60, 1), OscillatorEpisodes(3, 60, 2));
  const double before = trainer.ValidationLoss();
  trainer.Run(TempPath("falls.state"), false, nullptr, nullptr);
  const double after = trainer.ValidationLoss();
  EXPECT_LT(after, 0.5 * before) << "before " << before << ", after " << after;
  ASSERT_EQ(trainer.log().size(), 15u);
  EXPECT_EQ(trainer.log().back().step, 300);
  EXPECT_DOUBLE_EQ(trainer.log().back().validation_loss, after);
}

// The oscillator's action is random at every step: without the side input
// a noisy token's action can only be guessed, with it the action of half the
// tokens is given, so the same training reaches a clearly lower loss.
TEST(TrainerTest, KnownActionInputLowersTheLoss) {
  const NoiseSchedule schedule;
  const auto train = OscillatorEpisodes(12, 60, 1), validation = OscillatorEpisodes(3, 60, 2);
  TransformerConfig with_input = testing::TinyConfig(4);
  with_input.action_input_dim = 1;
  Trainer plain(testing::TinyConfig(4), schedule, FastTrainerOptions(300), train, validation);
  Trainer informed(with_input, schedule, FastTrainerOptions(300), train, validation);
  plain.Run(TempPath("plain.state"), false, nullptr, nullptr);
  informed.Run(TempPath("informed.state"), false, nullptr, nullptr);
  EXPECT_LT(informed.ValidationLoss(), 0.9 * plain.ValidationLoss())
      << "with " << informed.ValidationLoss() << ", without " << plain.ValidationLoss();
}

// Sensor noise reaches the context the model reads (the same weights score
// the fixed validation windows differently), and the model still learns to
// predict the exact future from it.
TEST(TrainerTest, SensorNoiseCorruptsTheContextAndTheModelStillLearns) {
  const NoiseSchedule schedule;
  const auto train = OscillatorEpisodes(12, 60, 1), validation = OscillatorEpisodes(3, 60, 2);
  TrainerOptions noisy_options = FastTrainerOptions(300);
  noisy_options.sensor_noise =
      MakeSensorNoise({1, 3, false}, Normalizer(torch::zeros({4}), torch::ones({4})), 0.3);
  Trainer exact(testing::TinyConfig(4), schedule, FastTrainerOptions(300), train, validation);
  Trainer noisy(testing::TinyConfig(4), schedule, noisy_options, train, validation);
  const double before = noisy.ValidationLoss();
  EXPECT_NE(before, exact.ValidationLoss());
  noisy.Run(TempPath("sensor.state"), false, nullptr, nullptr);
  EXPECT_LT(noisy.ValidationLoss(), 0.5 * before);
}

TEST(TrainerTest, SameSeedSameWeightsAndLosses) {
  const NoiseSchedule schedule;
  const auto train = OscillatorEpisodes(4, 30, 1), validation = OscillatorEpisodes(2, 30, 2);
  auto run = [&](uint64_t seed, const std::string& name) {
    TrainerOptions options = FastTrainerOptions(20);
    options.seed = seed;
    torch::manual_seed(999 + seed);  // the global generator must not matter
    auto trainer =
        std::make_unique<Trainer>(testing::TinyConfig(4), schedule, options, train, validation);
    trainer->Run(TempPath(name), false, nullptr, nullptr);
    return trainer;
  };
  const auto a = run(3, "seed_a.state"), b = run(3, "seed_b.state"), c = run(4, "seed_c.state");
  EXPECT_EQ(a->log().back().train_loss, b->log().back().train_loss);
  EXPECT_NE(a->log().back().train_loss, c->log().back().train_loss);
  const auto pa = a->ema_model().parameters(), pb = b->ema_model().parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i]));
}

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

TEST(TrainerTest, ResumeReproducesTheUninterruptedRun) {
  const NoiseSchedule schedule;
  const auto train = OscillatorEpisodes(6, 40, 1);
  const auto validation = OscillatorEpisodes(2, 40, 2);
  const std::string whole_path = TempPath("whole.state"), cut_path = TempPath("cut.state");

  Trainer whole(testing::TinyConfig(4), schedule, FastTrainerOptions(60), train, validation);
  whole.Run(whole_path, false, nullptr, nullptr);

  {  // Dies at step 47: the state saved at step 40 survives.
    Trainer cut(testing::TinyConfig(4), schedule, FastTrainerOptions(60), train, validation);
    auto die = [](const TrainProgress& p) {
      if (p.step == 47) throw Interrupted();
    };
    EXPECT_THROW(cut.Run(cut_path, false, die, nullptr), Interrupted);
  }
  Trainer resumed(testing::TinyConfig(4), schedule, FastTrainerOptions(60), train, validation);
  int first_step = 0;
  resumed.Run(
      cut_path, true,
      [&](const TrainProgress& p) {
        if (first_step == 0) first_step = p.step;
      },
      nullptr);
  EXPECT_EQ(first_step, 41);  // continued after the last state, not from scratch

  ASSERT_EQ(resumed.log().size(), whole.log().size());
  for (size_t i = 0; i < whole.log().size(); ++i) {
    EXPECT_EQ(resumed.log()[i].step, whole.log()[i].step);
    EXPECT_EQ(resumed.log()[i].train_loss, whole.log()[i].train_loss) << "row " << i;
    EXPECT_EQ(resumed.log()[i].validation_loss, whole.log()[i].validation_loss) << "row " << i;
  }
  const auto a = whole.ema_model().parameters(), b = resumed.ema_model().parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i]));
}

TEST(TrainerTest, ResumeRefusesMissingOrForeignState) {
  const NoiseSchedule schedule;
  const auto data = OscillatorEpisodes(3, 20, 1);
  Trainer trainer(testing::TinyConfig(4), schedule, FastTrainerOptions(20), data, data);
  EXPECT_THROW(trainer.Run(TempPath("missing.state"), true, nullptr, nullptr), std::runtime_error);
  const std::string garbage = TempPath("garbage.state");
  std::FILE* f = std::fopen(garbage.c_str(), "w");
  std::fputs("not a state", f);
  std::fclose(f);
  EXPECT_THROW(trainer.Run(garbage, true, nullptr, nullptr), std::runtime_error);
  // A state from another window size is refused.
  const std::string other = TempPath("other.state");
  TrainerOptions options = FastTrainerOptions(20);
  options.window = 4;
  Trainer(testing::TinyConfig(4), schedule, options, data, data)
      .Run(other, false, nullptr, nullptr);
  EXPECT_THROW(trainer.Run(other, true, nullptr, nullptr), std::runtime_error);
}

TEST(TrainerTest, BadOptionsAndDataThrow) {
  const NoiseSchedule schedule;
  const auto data = OscillatorEpisodes(3, 20, 1);
  TrainerOptions options = FastTrainerOptions(20);
  options.steps = 0;
  EXPECT_THROW(Trainer(testing::TinyConfig(4), schedule, options, data, data),
               std::invalid_argument);
  options = FastTrainerOptions(20);
  options.timestep_power = 0.5;  // would favor high noise; only >= 1 is meaningful
  EXPECT_THROW(Trainer(testing::TinyConfig(4), schedule, options, data, data),
               std::invalid_argument);
  options = FastTrainerOptions(20);
  options.window = 21;  // longer than every sequence
  EXPECT_THROW(Trainer(testing::TinyConfig(4), schedule, options, data, data),
               std::invalid_argument);
  EXPECT_THROW(Trainer(testing::TinyConfig(5), schedule, FastTrainerOptions(20), data, data),
               std::invalid_argument);
  auto nan_data = data;
  nan_data[1] = nan_data[1].clone();
  nan_data[1][3][2] = std::nan("");
  EXPECT_THROW(Trainer(testing::TinyConfig(4), schedule, FastTrainerOptions(20), nan_data, data),
               std::invalid_argument);
  EXPECT_THROW(Trainer(testing::TinyConfig(4), schedule, FastTrainerOptions(20), {}, data),
               std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
