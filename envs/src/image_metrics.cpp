#include "dfmpc/envs/image_metrics.h"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace dfmpc::envs {
namespace {

constexpr int kWindow = 11;
constexpr double kSigma = 1.5;
constexpr double kPeak = 255.0;

void CheckFrames(const std::vector<std::uint8_t>& frame, const std::vector<std::uint8_t>& reference,
                 int width, int height) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height) + "x3";
  if (width < 1 || height < 1) {
    throw std::invalid_argument("frame size " + size + " must be positive");
  }
  const std::size_t expected = static_cast<std::size_t>(width) * height * 3;
  if (frame.size() != expected || reference.size() != expected) {
    throw std::invalid_argument("frames of " + std::to_string(frame.size()) + " and " +
                                std::to_string(reference.size()) + " bytes, expected " + size +
                                " = " + std::to_string(expected));
  }
}

std::array<double, kWindow> GaussianWeights() {
  std::array<double, kWindow> weights{};
  double sum = 0.0;
  for (int i = 0; i < kWindow; ++i) {
    const double offset = i - kWindow / 2;
    weights[i] = std::exp(-offset * offset / (2.0 * kSigma * kSigma));
    sum += weights[i];
  }
  for (double& weight : weights) weight /= sum;
  return weights;
}

// Gaussian-weighted means of x, y, x*x, y*y and x*y over each window.
struct WindowMoments {
  double x = 0, y = 0, xx = 0, yy = 0, xy = 0;
};

// Mean SSIM of one channel over the valid windows. The 2-D window is the
// outer product of 1-D weights, so rows are filtered first, then columns.
double ChannelSsim(const std::vector<std::uint8_t>& frame,
                   const std::vector<std::uint8_t>& reference, int width, int height, int channel) {
  static const std::array<double, kWindow> kWeights = GaussianWeights();
  const int out_width = width - kWindow + 1;
  const int out_height = height - kWindow + 1;
  std::vector<WindowMoments> rows(static_cast<std::size_t>(height) * out_width);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < out_width; ++x) {
      WindowMoments& m = rows[static_cast<std::size_t>(y) * out_width + x];
      for (int k = 0; k < kWindow; ++k) {
        const std::size_t index = (static_cast<std::size_t>(y) * width + x + k) * 3 + channel;
        const double a = frame[index];
        const double b = reference[index];
        const double w = kWeights[k];
        m.x += w * a;
        m.y += w * b;
        // Exact integer products first: swapping the frames then gives
        // bit-identical moments, so the result is exactly symmetric.
        m.xx += w * (a * a);
        m.yy += w * (b * b);
        m.xy += w * (a * b);
      }
    }
  }
  constexpr double kC1 = (0.01 * kPeak) * (0.01 * kPeak);
  constexpr double kC2 = (0.03 * kPeak) * (0.03 * kPeak);
  double sum = 0.0;
  for (int y = 0; y < out_height; ++y) {
    for (int x = 0; x < out_width; ++x) {
      WindowMoments m;
      for (int k = 0; k < kWindow; ++k) {
        const WindowMoments& r = rows[static_cast<std::size_t>(y + k) * out_width + x];
        const double w = kWeights[k];
        m.x += w * r.x;
        m.y += w * r.y;
        m.xx += w * r.xx;
        m.yy += w * r.yy;
        m.xy += w * r.xy;
      }
      const double var_x = m.xx - m.x * m.x;
      const double var_y = m.yy - m.y * m.y;
      const double covariance = m.xy - m.x * m.y;
      sum += (2.0 * m.x * m.y + kC1) * (2.0 * covariance + kC2) /
             ((m.x * m.x + m.y * m.y + kC1) * (var_x + var_y + kC2));
    }
  }
  return sum / (static_cast<double>(out_width) * out_height);
}

}  // namespace

double FramePsnrBytes(const std::vector<std::uint8_t>& frame,
                      const std::vector<std::uint8_t>& reference, int width, int height) {
  CheckFrames(frame, reference, width, height);
  double squared_error = 0.0;
  for (std::size_t i = 0; i < frame.size(); ++i) {
    const double difference = static_cast<double>(frame[i]) - reference[i];
    squared_error += difference * difference;
  }
  if (squared_error == 0.0) return std::numeric_limits<double>::infinity();
  const double mean_squared_error = squared_error / static_cast<double>(frame.size());
  return 10.0 * std::log10(kPeak * kPeak / mean_squared_error);
}

// Z. Wang, A. C. Bovik, H. R. Sheikh, E. P. Simoncelli, "Image quality
// assessment: from error visibility to structural similarity", IEEE Trans.
// Image Processing 13(4), 2004, eq. (13) with the weighted statistics of
// eqs. (14)-(16): C1 = (K1 L)^2, C2 = (K2 L)^2, K1 = 0.01, K2 = 0.03, L = 255.
double FrameSsim(const std::vector<std::uint8_t>& frame, const std::vector<std::uint8_t>& reference,
                 int width, int height) {
  CheckFrames(frame, reference, width, height);
  if (width < kWindow || height < kWindow) {
    throw std::invalid_argument("SSIM needs frames of at least 11x11 pixels, got " +
                                std::to_string(width) + "x" + std::to_string(height));
  }
  double sum = 0.0;
  for (int channel = 0; channel < 3; ++channel) {
    sum += ChannelSsim(frame, reference, width, height, channel);
  }
  return sum / 3.0;
}

}  // namespace dfmpc::envs
