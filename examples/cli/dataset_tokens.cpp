#include "dataset_tokens.h"

#include <ATen/ATen.h>

namespace dfmpc::cli {
namespace {

// Rows [first, first + count) of a row-major float matrix, copied.
at::Tensor Rows(const envs::RowMatrixXf& matrix, int64_t first, int64_t count) {
  const int64_t cols = matrix.cols();
  return at::from_blob(const_cast<float*>(matrix.data()) + first * cols, {count, cols},
                       at::kFloat)
      .clone();
}

}  // namespace

worldmodel::TokenLayout DatasetLayout(const envs::Dataset& dataset) {
  return worldmodel::TokenLayout{dataset.info.action_size, dataset.info.observation_size};
}

std::vector<at::Tensor> EpisodeTokenSequences(const envs::Dataset& dataset) {
  std::vector<at::Tensor> sequences;
  for (int e = 0; e < dataset.num_episodes(); ++e) {
    const int64_t start = dataset.episode_starts[e];
    const int64_t length = dataset.episode_lengths[e];
    const at::Tensor observations =
        at::cat({Rows(dataset.observations, start, length),
                 Rows(dataset.next_observations, start + length - 1, 1)});
    sequences.push_back(
        worldmodel::EpisodeTokens(observations, Rows(dataset.actions, start, length)));
  }
  return sequences;
}

}  // namespace dfmpc::cli
