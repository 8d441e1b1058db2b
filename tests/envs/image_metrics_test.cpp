#include "dfmpc/envs/image_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::envs {
namespace {

using Frame = std::vector<std::uint8_t>;

constexpr double kC1 = 2.55 * 2.55;
constexpr double kC2 = 7.65 * 7.65;

Frame Constant(int width, int height, std::uint8_t value) {
  return Frame(static_cast<std::size_t>(width) * height * 3, value);
}

Frame Random(int width, int height, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  Frame frame(static_cast<std::size_t>(width) * height * 3);
  for (std::uint8_t& value : frame) value = static_cast<std::uint8_t>(byte(random));
  return frame;
}

// A smooth pattern, so that added noise is what changes the structure.
Frame Smooth(int width, int height) {
  Frame frame(static_cast<std::size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 3; ++c) {
        frame[(static_cast<std::size_t>(y) * width + x) * 3 + c] =
            static_cast<std::uint8_t>(128 + 80 * std::sin(0.2 * x + c) * std::cos(0.15 * y));
      }
    }
  }
  return frame;
}

// SSIM straight from the definition: one 2-D window per position, variances
// as weighted sums of squared deviations.
double ReferenceSsim(const Frame& a, const Frame& b, int width, int height) {
  double weights[11][11];
  double total = 0.0;
  for (int i = 0; i < 11; ++i) {
    for (int j = 0; j < 11; ++j) {
      weights[i][j] = std::exp(-((i - 5) * (i - 5) + (j - 5) * (j - 5)) / (2 * 1.5 * 1.5));
      total += weights[i][j];
    }
  }
  double sum = 0.0;
  int count = 0;
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y + 11 <= height; ++y) {
      for (int x = 0; x + 11 <= width; ++x) {
        auto at = [&](const Frame& f, int i, int j) {
          return static_cast<double>(f[(static_cast<std::size_t>(y + i) * width + x + j) * 3 + c]);
        };
        double mean_a = 0, mean_b = 0;
        for (int i = 0; i < 11; ++i) {
          for (int j = 0; j < 11; ++j) {
            mean_a += weights[i][j] / total * at(a, i, j);
            mean_b += weights[i][j] / total * at(b, i, j);
          }
        }
        double var_a = 0, var_b = 0, cov = 0;
        for (int i = 0; i < 11; ++i) {
          for (int j = 0; j < 11; ++j) {
            const double w = weights[i][j] / total;
            var_a += w * (at(a, i, j) - mean_a) * (at(a, i, j) - mean_a);
            var_b += w * (at(b, i, j) - mean_b) * (at(b, i, j) - mean_b);
            cov += w * (at(a, i, j) - mean_a) * (at(b, i, j) - mean_b);
          }
        }
        sum += (2 * mean_a * mean_b + kC1) * (2 * cov + kC2) /
               ((mean_a * mean_a + mean_b * mean_b + kC1) * (var_a + var_b + kC2));
        ++count;
      }
    }
  }
  return sum / count;
}

TEST(ImageMetricsTest, IdenticalFramesAreAPerfectMatch) {
  const Frame frame = Random(32, 24, 1);
  EXPECT_NEAR(FrameSsim(frame, frame, 32, 24), 1.0, 1e-12);
  EXPECT_EQ(FramePsnrBytes(frame, frame, 32, 24), std::numeric_limits<double>::infinity());
}

TEST(ImageMetricsTest, PsnrOfAConstantOffset) {
  const Frame reference = Random(7, 5, 2);
  for (int d : {1, 3, 17, 100}) {
    Frame frame = reference;
    for (std::uint8_t& value : frame) {
      value = static_cast<std::uint8_t>(value >= d ? value - d : value + d);
    }
    EXPECT_NEAR(FramePsnrBytes(frame, reference, 7, 5), 20.0 * std::log10(255.0 / d), 1e-9) << d;
  }
  EXPECT_NEAR(FramePsnrBytes(Constant(7, 5, 0), Constant(7, 5, 255), 7, 5), 0.0, 1e-12);
}

TEST(ImageMetricsTest, SsimOfConstantFramesHasAClosedForm) {
  // Zero variances: the contrast-structure term is C2 / C2 = 1.
  const double a = 100, b = 150;
  const double expected = (2 * a * b + kC1) / (a * a + b * b + kC1);
  EXPECT_NEAR(FrameSsim(Constant(13, 12, 100), Constant(13, 12, 150), 13, 12), expected, 1e-9);
}

TEST(ImageMetricsTest, SsimMatchesTheDefinitionComputedDirectly) {
  const Frame a = Smooth(19, 14);
  const Frame b = Random(19, 14, 3);
  EXPECT_NEAR(FrameSsim(a, b, 19, 14), ReferenceSsim(a, b, 19, 14), 1e-9);
  // The smallest frame: a single window.
  const Frame c = Random(11, 11, 4);
  const Frame d = Random(11, 11, 5);
  EXPECT_NEAR(FrameSsim(c, d, 11, 11), ReferenceSsim(c, d, 11, 11), 1e-9);
}

TEST(ImageMetricsTest, SsimIsSymmetric) {
  const Frame a = Smooth(20, 16);
  const Frame b = Random(20, 16, 6);
  EXPECT_DOUBLE_EQ(FrameSsim(a, b, 20, 16), FrameSsim(b, a, 20, 16));
  Frame c = a;
  for (std::size_t i = 0; i < c.size(); i += 7) c[i] = static_cast<std::uint8_t>(255 - c[i]);
  EXPECT_DOUBLE_EQ(FrameSsim(a, c, 20, 16), FrameSsim(c, a, 20, 16));
}

TEST(ImageMetricsTest, MoreNoiseLowersBothMetrics) {
  const int width = 40, height = 30;
  const Frame clean = Smooth(width, height);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> noise(clean.size());
  for (double& value : noise) value = unit(random);
  double last_ssim = 1.0;
  double last_psnr = std::numeric_limits<double>::infinity();
  for (double amplitude : {2.0, 5.0, 10.0, 20.0, 40.0, 80.0}) {
    Frame noisy = clean;
    for (std::size_t i = 0; i < noisy.size(); ++i) {
      noisy[i] = static_cast<std::uint8_t>(
          std::clamp(std::lround(clean[i] + amplitude * noise[i]), 0L, 255L));
    }
    const double ssim = FrameSsim(noisy, clean, width, height);
    const double psnr = FramePsnrBytes(noisy, clean, width, height);
    EXPECT_LT(ssim, last_ssim) << amplitude;
    EXPECT_LT(psnr, last_psnr) << amplitude;
    last_ssim = ssim;
    last_psnr = psnr;
  }
}

TEST(ImageMetricsTest, RejectsMismatchedOrTinyFrames) {
  const Frame frame = Random(12, 12, 8);
  try {
    FramePsnrBytes(frame, Random(12, 11, 8), 12, 12);
    FAIL() << "mismatched sizes accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("396"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("12x12x3"), std::string::npos) << error.what();
  }
  EXPECT_THROW(FrameSsim(frame, frame, 12, 11), std::invalid_argument);
  EXPECT_THROW(FrameSsim(Random(10, 12, 9), Random(10, 12, 9), 10, 12), std::invalid_argument);
  EXPECT_THROW(FramePsnrBytes({}, {}, 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::envs
