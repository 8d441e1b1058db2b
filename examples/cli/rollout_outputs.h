// What `dfmpc rollout` writes for people to look at: the side-by-side video
// (ground truth | prediction | absolute error) as GIF and MP4, a PNG strip
// of every k-th frame, and PSNR and SSIM against the horizon (CSV and plot)
// for the model and its baselines.
#ifndef DFMPC_EXAMPLES_CLI_ROLLOUT_OUTPUTS_H_
#define DFMPC_EXAMPLES_CLI_ROLLOUT_OUTPUTS_H_

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace dfmpc::cli {

// Frames of a method: uint8 [H, height, width, 3], the H steps after the
// context.
struct MethodFrames {
  std::string name;
  at::Tensor frames;
};

// PSNR is capped here (identical frames have an infinite one), so means and
// plots stay finite.
inline constexpr double kPsnrCapDb = 100.0;

// PSNR and SSIM of each method against the truth at every horizon step,
// averaged over the episodes added.
class HorizonMetrics {
 public:
  HorizonMetrics(std::vector<std::string> methods, int horizon);

  // `predictions` in the order of the methods; `truth` [H, height, width, 3].
  void Add(const std::vector<MethodFrames>& predictions, const at::Tensor& truth);

  int episodes() const { return episodes_; }
  const std::vector<std::string>& methods() const { return methods_; }
  // Means over the episodes at horizon step h (1-based).
  double Psnr(int method, int h) const;
  double Ssim(int method, int h) const;

  // Columns h, then METHOD_psnr_db and METHOD_ssim per method.
  void WriteCsv(const std::string& path) const;
  // Two panels, PSNR and SSIM against h, one line per method.
  void WritePlot(const std::string& path, const std::string& title) const;

 private:
  std::vector<std::string> methods_;
  int horizon_;
  int episodes_ = 0;
  std::vector<std::vector<double>> psnr_sum_, ssim_sum_;  // [method][h - 1]
};

// One frame of the side-by-side video per step: TRUTH | MODEL | ERROR, each
// upscaled by `scale`, headed by the step number.
std::vector<std::vector<std::uint8_t>> SideBySideFrames(const at::Tensor& truth,
                                                        const at::Tensor& prediction, int scale,
                                                        int* width, int* height);

// Every `every`-th step (every, 2 every, ...): truth above, prediction
// below, labelled with the step.
void WriteStrip(const std::string& path, const at::Tensor& truth, const at::Tensor& prediction,
                int every, int scale);

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_ROLLOUT_OUTPUTS_H_
