// Perturbation specs: the text form, merging, validation and sampling.
#include "dfmpc/envs/perturbation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::envs {
namespace {

// Every parameter randomized.
const char kEveryRange[] =
    "obs_noise=0:0.1,obs_noise_rel=0:0.05,delay=0:3,gain=0.5:1.5,mass=0.7:1.3,damping=0.5:2,"
    "friction=0.5:1.5";

TEST(PerturbationTest, ParsesFixedValuesAndRanges) {
  const PerturbationSpec fixed = ParsePerturbation("obs_noise=0.03, damping=1.5");
  EXPECT_EQ(fixed.obs_noise.low, 0.03);
  EXPECT_EQ(fixed.obs_noise.high, 0.03);
  EXPECT_EQ(fixed.damping.low, 1.5);
  EXPECT_TRUE(fixed.damping.fixed());
  EXPECT_EQ(fixed.mass.low, 1.0);  // untouched: the default
  EXPECT_FALSE(fixed.IsNominal());

  const PerturbationSpec ranges = ParsePerturbation("mass=0.7:1.3,delay=0:2");
  EXPECT_EQ(ranges.mass.low, 0.7);
  EXPECT_EQ(ranges.mass.high, 1.3);
  EXPECT_EQ(ranges.delay.high, 2.0);
  EXPECT_FALSE(ranges.mass.fixed());

  EXPECT_TRUE(ParsePerturbation("").IsNominal());
  EXPECT_TRUE(ParsePerturbation("obs_noise=0,delay=0,gain=1,mass=1:1").IsNominal());
}

TEST(PerturbationTest, FormatsTheShortestTextThatParsesBack) {
  EXPECT_EQ(FormatPerturbation(PerturbationSpec()), "");
  EXPECT_EQ(FormatPerturbation(ParsePerturbation("damping=1.5, obs_noise=0.03")),
            "obs_noise=0.03,damping=1.5");
  EXPECT_EQ(FormatPerturbation(ParsePerturbation(kEveryRange)), kEveryRange);
  Perturbation episode;
  episode.delay = 2;
  episode.mass = 0.1 + 0.2;  // not a short decimal: all 17 digits are kept
  const std::string text = FormatPerturbation(episode);
  EXPECT_EQ(text, "delay=2,mass=0.30000000000000004");
  EXPECT_EQ(ParsePerturbation(text).mass.low, episode.mass);
}

TEST(PerturbationTest, ValuesRoundTripInNameOrder) {
  EXPECT_EQ(PerturbationNames(), (std::vector<std::string>{"obs_noise", "obs_noise_rel", "delay",
                                                           "gain", "mass", "damping", "friction"}));
  Perturbation p;
  p.obs_noise = 0.1;
  p.delay = 3;
  p.friction = 0.5;
  EXPECT_EQ(PerturbationValues(p), (std::vector<double>{0.1, 0.0, 3.0, 1.0, 1.0, 1.0, 0.5}));
  EXPECT_EQ(PerturbationValues(PerturbationFromValues(PerturbationValues(p))),
            PerturbationValues(p));
  EXPECT_TRUE(Perturbation().IsNominal());
  EXPECT_FALSE(p.IsNominal());
  EXPECT_THROW(PerturbationFromValues({1.0}), std::invalid_argument);
  EXPECT_THROW(PerturbationFromValues({0, 0, 0.5, 1, 1, 1, 1}), std::invalid_argument);
}

// Each case: a name, the text, then what the message must contain.
struct BadSpec {
  const char* name;
  const char* text;
  const char* message;
};

class BadSpecTest : public testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecTest, IsAClearErrorNamingTheParameter) {
  try {
    ParsePerturbation(GetParam().text);
    FAIL() << "expected an exception for '" << GetParam().text << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().message), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, BadSpecTest,
    testing::Values(
        BadSpec{"unknown_name", "dampng=2",
                "unknown perturbation parameter 'dampng' (known: obs_noise, "
                "obs_noise_rel, delay, gain, mass, damping, friction)"},
        BadSpec{"negative_std", "obs_noise=-0.1",
                "'obs_noise' is a std and must be >= 0, got -0.1"},
        BadSpec{"negative_relative_std", "obs_noise_rel=-1:1",
                "'obs_noise_rel' is a std and must be >= 0, got -1"},
        BadSpec{"zero_scale", "mass=0", "'mass' is a scale and must be > 0, got 0"},
        BadSpec{"negative_scale_low", "gain=-2:1", "'gain' is a scale and must be > 0, got -2"},
        BadSpec{"zero_scale_high", "friction=0.5:0",
                "'friction' is a scale and must be > 0, got 0"},
        BadSpec{"negative_delay", "delay=-1",
                "'delay' is a whole number of control steps in 0..1000, got -1"},
        BadSpec{"fractional_delay", "delay=1.5",
                "'delay' is a whole number of control steps in 0..1000, got 1.5"},
        BadSpec{"delay_too_long", "delay=0:5000",
                "'delay' is a whole number of control steps in 0..1000"},
        BadSpec{"low_above_high", "damping=2:1", "'damping': range 2:1 has low > high"},
        BadSpec{"nan", "damping=nan", "'damping' must be a finite number, got nan"},
        BadSpec{"inf", "obs_noise=0:inf", "'obs_noise' must be a finite number, got inf"},
        BadSpec{"not_a_number", "mass=heavy", "'mass': 'heavy' is not a number"},
        BadSpec{"empty_value", "mass=", "'mass': '' is not a number"},
        BadSpec{"three_bounds", "mass=1:2:3",
                "'mass': '1:2:3' is neither a value nor a range low:high"},
        BadSpec{"no_value", "mass", "'mass' has no value"},
        BadSpec{"given_twice", "mass=1,mass=2", "'mass' is given twice"},
        BadSpec{"empty_entry", "mass=1,,gain=2", "has an entry without a name"},
        BadSpec{"no_name", "=1", "has an entry without a name"}),
    [](const testing::TestParamInfo<BadSpec>& info) { return std::string(info.param.name); });

TEST(PerturbationTest, ValidatesSpecsBuiltInCode) {
  PerturbationSpec spec;
  spec.gain = {2.0, 1.0};
  EXPECT_THROW(ValidatePerturbation(spec), std::invalid_argument);
  spec.gain = {1.0, std::nan("")};
  EXPECT_THROW(ValidatePerturbation(spec), std::invalid_argument);
  EXPECT_THROW(SamplePerturbation(spec, 0), std::invalid_argument);
  ValidatePerturbation(ParsePerturbation(kEveryRange));
}

TEST(PerturbationTest, MergesFixedValuesWithRanges) {
  const PerturbationSpec merged = MergePerturbations(ParsePerturbation("obs_noise=0.03,delay=1"),
                                                     ParsePerturbation("mass=0.7:1.3"));
  EXPECT_EQ(FormatPerturbation(merged), "obs_noise=0.03,delay=1,mass=0.7:1.3");
  EXPECT_TRUE(MergePerturbations(PerturbationSpec(), PerturbationSpec()).IsNominal());
}

TEST(PerturbationTest, MergeRefusesAParameterInBothAndARangeAsAFixedValue) {
  try {
    MergePerturbations(ParsePerturbation("damping=1.5"), ParsePerturbation("damping=0.5:2"));
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'damping' is both fixed and randomized"),
              std::string::npos)
        << e.what();
  }
  try {
    MergePerturbations(ParsePerturbation("mass=0.7:1.3"), PerturbationSpec());
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'mass': a fixed perturbation takes one value"),
              std::string::npos)
        << e.what();
  }
}

TEST(PerturbationTest, SamplesInsideTheRangesReproduciblyAndDifferentlyPerSeed) {
  const PerturbationSpec spec = ParsePerturbation(kEveryRange);
  std::vector<std::vector<double>> draws;
  std::vector<bool> delays_seen(4, false);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const Perturbation p = SamplePerturbation(spec, seed);
    EXPECT_EQ(PerturbationValues(p), PerturbationValues(SamplePerturbation(spec, seed)));
    EXPECT_GE(p.obs_noise, 0.0);
    EXPECT_LE(p.obs_noise, 0.1);
    EXPECT_GE(p.obs_noise_rel, 0.0);
    EXPECT_LE(p.obs_noise_rel, 0.05);
    ASSERT_GE(p.delay, 0);
    ASSERT_LE(p.delay, 3);
    delays_seen[p.delay] = true;
    EXPECT_GE(p.gain, 0.5);
    EXPECT_LE(p.gain, 1.5);
    EXPECT_GE(p.mass, 0.7);
    EXPECT_LE(p.mass, 1.3);
    EXPECT_GE(p.damping, 0.5);
    EXPECT_LE(p.damping, 2.0);
    EXPECT_GE(p.friction, 0.5);
    EXPECT_LE(p.friction, 1.5);
    draws.push_back(PerturbationValues(p));
  }
  // Every whole delay of 0..3 comes up in 50 draws (each misses with
  // probability (3/4)^50, about 6e-7).
  EXPECT_EQ(delays_seen, std::vector<bool>(4, true));
  for (std::size_t i = 1; i < draws.size(); ++i) {
    for (std::size_t k : {0, 1, 3, 4, 5, 6}) EXPECT_NE(draws[i][k], draws[0][k]) << i << " " << k;
  }
}

TEST(PerturbationTest, FixedValuesAreTakenAsTheyAre) {
  const Perturbation p = SamplePerturbation(ParsePerturbation("damping=1.5,delay=2"), 123);
  EXPECT_EQ(p.damping, 1.5);
  EXPECT_EQ(p.delay, 2);
  EXPECT_EQ(p.mass, 1.0);
  EXPECT_TRUE(SamplePerturbation(PerturbationSpec(), 5).IsNominal());
}

TEST(PerturbationTest, DescribesEveryParameter) {
  const std::string help = DescribePerturbationParameters();
  for (const std::string& name : PerturbationNames()) {
    EXPECT_NE(help.find("  " + name + " "), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace dfmpc::envs
