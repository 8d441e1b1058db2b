#include "rollout_outputs.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "dfmpc/envs/frame_compose.h"
#include "dfmpc/envs/image_io.h"
#include "dfmpc/envs/image_metrics.h"
#include "plot/plot.h"
#include "table.h"

namespace dfmpc::cli {
namespace {

constexpr std::array<std::uint8_t, 3> kGapColour{40, 40, 40};
constexpr int kGap = 2;

std::vector<std::uint8_t> FrameBytes(const at::Tensor& frames, int64_t index) {
  const at::Tensor frame = frames[index].contiguous();
  const std::uint8_t* data = frame.data_ptr<std::uint8_t>();
  return std::vector<std::uint8_t>(data, data + frame.numel());
}

envs::RgbImage Image(const at::Tensor& frames, int64_t index) {
  envs::RgbImage image;
  image.height = static_cast<int>(frames.size(1));
  image.width = static_cast<int>(frames.size(2));
  image.pixels = FrameBytes(frames, index);
  return image;
}

}  // namespace

HorizonMetrics::HorizonMetrics(std::vector<std::string> methods, int horizon)
    : methods_(std::move(methods)),
      horizon_(horizon),
      psnr_sum_(methods_.size(), std::vector<double>(horizon, 0.0)),
      ssim_sum_(methods_.size(), std::vector<double>(horizon, 0.0)) {}

void HorizonMetrics::Add(const std::vector<MethodFrames>& predictions, const at::Tensor& truth) {
  if (predictions.size() != methods_.size()) throw std::logic_error("HorizonMetrics: methods");
  const int height = static_cast<int>(truth.size(1)), width = static_cast<int>(truth.size(2));
  for (std::size_t m = 0; m < methods_.size(); ++m) {
    for (int h = 0; h < horizon_; ++h) {
      const std::vector<std::uint8_t> real = FrameBytes(truth, h);
      const std::vector<std::uint8_t> made = FrameBytes(predictions[m].frames, h);
      psnr_sum_[m][h] += std::min(kPsnrCapDb, envs::FramePsnrBytes(made, real, width, height));
      ssim_sum_[m][h] += envs::FrameSsim(made, real, width, height);
    }
  }
  ++episodes_;
}

double HorizonMetrics::Psnr(int method, int h) const {
  return psnr_sum_[method][h - 1] / std::max(1, episodes_);
}

double HorizonMetrics::Ssim(int method, int h) const {
  return ssim_sum_[method][h - 1] / std::max(1, episodes_);
}

void HorizonMetrics::WriteCsv(const std::string& path) const {
  std::vector<std::string> header{"h"};
  for (const std::string& m : methods_) {
    header.push_back(m + "_psnr_db");
    header.push_back(m + "_ssim");
  }
  Table table(header);
  for (int h = 1; h <= horizon_; ++h) {
    std::vector<std::string> row{std::to_string(h)};
    for (std::size_t m = 0; m < methods_.size(); ++m) {
      row.push_back(FormatFixed(Psnr(static_cast<int>(m), h), 3));
      row.push_back(FormatFixed(Ssim(static_cast<int>(m), h), 4));
    }
    table.AddRow(row);
  }
  table.WriteCsv(path);
}

void HorizonMetrics::WritePlot(const std::string& path, const std::string& title) const {
  plot::Panel psnr{title + ": PSNR against the horizon", "steps after the context", "PSNR (dB)",
                   false, {}};
  plot::Panel ssim{title + ": SSIM against the horizon", "steps after the context", "SSIM", false,
                   {}};
  for (std::size_t m = 0; m < methods_.size(); ++m) {
    plot::Series p{methods_[m], {}, {}}, s{methods_[m], {}, {}};
    for (int h = 1; h <= horizon_; ++h) {
      p.x.push_back(h);
      p.y.push_back(Psnr(static_cast<int>(m), h));
      s.x.push_back(h);
      s.y.push_back(Ssim(static_cast<int>(m), h));
    }
    psnr.series.push_back(p);
    ssim.series.push_back(s);
  }
  plot::WritePlotPng(path, {psnr, ssim});
}

std::vector<std::vector<std::uint8_t>> SideBySideFrames(const at::Tensor& truth,
                                                        const at::Tensor& prediction, int scale,
                                                        int* width, int* height) {
  std::vector<std::vector<std::uint8_t>> frames;
  const int64_t horizon = truth.size(0);
  for (int64_t t = 0; t < horizon; ++t) {
    const envs::RgbImage real = Image(truth, t), made = Image(prediction, t);
    const envs::RgbImage row = envs::ConcatenateHorizontally(
        {envs::WithLabelBar(envs::Upscale(real, scale), "TRUTH"),
         envs::WithLabelBar(envs::Upscale(made, scale), "MODEL"),
         envs::WithLabelBar(envs::Upscale(envs::AbsoluteDifference(made, real), scale), "ERROR")},
        kGap, kGapColour);
    const envs::RgbImage frame = envs::WithLabelBar(
        row, "STEP " + std::to_string(t + 1) + " / " + std::to_string(horizon));
    *width = frame.width;
    *height = frame.height;
    frames.push_back(frame.pixels);
  }
  return frames;
}

void WriteStrip(const std::string& path, const at::Tensor& truth, const at::Tensor& prediction,
                int every, int scale) {
  std::vector<envs::RgbImage> columns;
  for (int64_t t = every - 1; t < truth.size(0); t += every) {
    columns.push_back(envs::WithLabelBar(
        envs::ConcatenateVertically({envs::Upscale(Image(truth, t), scale),
                                     envs::Upscale(Image(prediction, t), scale)},
                                    kGap, kGapColour),
        std::to_string(t + 1)));
  }
  if (columns.empty()) throw std::invalid_argument("strip: no frame to show");
  const envs::RgbImage strip = envs::ConcatenateHorizontally(columns, kGap, kGapColour);
  envs::WritePng(path, strip.pixels, strip.width, strip.height);
}

}  // namespace dfmpc::cli
