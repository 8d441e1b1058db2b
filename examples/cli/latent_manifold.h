// Does a long rollout stay on the data manifold? For every generated latent,
// the distance to its nearest latent among a dataset's frames, beside the
// same distance for the real frames at that step (held-out frames are not
// in the dataset either, so theirs is the figure to compare with).
// Distances are in units of the latent features' RMS standard deviation
// over the dataset.
#ifndef DFMPC_EXAMPLES_CLI_LATENT_MANIFOLD_H_
#define DFMPC_EXAMPLES_CLI_LATENT_MANIFOLD_H_

#include <ATen/core/Tensor.h>

#include <ostream>
#include <string>
#include <vector>

#include "dfmpc/worldmodel/video_model.h"

namespace dfmpc::cli {

class LatentManifold {
 public:
  // Encodes every frame of the dataset at `path` (which must fit the
  // model's tokenizer and task).
  LatentManifold(const std::string& path, worldmodel::VideoModel& model);

  // Latents [H, latent] of one rollout and of the real frames it predicts.
  // Every rollout added must have the same H.
  void Add(const at::Tensor& generated, const at::Tensor& real);

  // CSV: h, model_nn, real_nn (means over the rollouts); the plot shows both
  // against h.
  void Write(const std::string& csv, const std::string& png, const std::string& title) const;
  // Means over h = 1-10, 11-100, 101-1000, ... and their ratio.
  void PrintSummary(std::ostream& out) const;

 private:
  // Nearest-neighbour distance of each row of `latents` [n, latent].
  at::Tensor NearestDistances(const at::Tensor& latents) const;

  at::Tensor bank_;  // [N, latent], standardized
  at::Tensor mean_, scale_;  // [latent] and a scalar
  std::vector<double> generated_sum_, real_sum_;
  int rollouts_ = 0;
};

}  // namespace dfmpc::cli

#endif  // DFMPC_EXAMPLES_CLI_LATENT_MANIFOLD_H_
