// Bridges envs datasets and world-model tokens.
#ifndef DFMPC_EXAMPLES_PIPELINES_DATASET_TOKENS_H_
#define DFMPC_EXAMPLES_PIPELINES_DATASET_TOKENS_H_

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "dfmpc/envs/dataset.h"
#include "dfmpc/worldmodel/tokens.h"

namespace dfmpc::worldmodel {
class FrameAutoencoderImpl;
}  // namespace dfmpc::worldmodel

namespace dfmpc::pipelines {

// The token layout of a dataset's task: [a_{t-1}, o_t] and, with
// `observation_deltas`, o_t - o_{t-1}.
worldmodel::TokenLayout DatasetLayout(const envs::Dataset& dataset, bool observation_deltas);

// Rows [first, first + count) of a row-major float matrix, copied.
at::Tensor CopyRows(const envs::RowMatrixXf& matrix, int64_t first, int64_t count);

// Throws std::invalid_argument naming both files when the dataset `info`
// (read from `path`) differs from `first` in task, observation or action
// size or control rate: data trained on together must agree.
void CheckSameData(const envs::DatasetInfo& info, const std::string& path,
                   const envs::DatasetInfo& first, const std::string& first_path);

// One [L + 1, d] token sequence per episode of `dataset` (o_0 .. o_L, the
// last one from next_observations) in `layout`, unnormalized.
std::vector<at::Tensor> EpisodeTokenSequences(const envs::Dataset& dataset,
                                              const worldmodel::TokenLayout& layout);

// One [L] reward sequence per episode of `dataset` (the rewards of its
// steps, copied).
std::vector<at::Tensor> EpisodeRewards(const envs::Dataset& dataset);

// One [L + 1] reward sequence per episode of `dataset`, aligned with
// EpisodeTokenSequences: token t's is the reward of the step that led to
// o_t (token 0, which no step led to, gets the first step's).
std::vector<at::Tensor> EpisodeTokenRewards(const envs::Dataset& dataset);

// Episodes split for training: the last round(fraction * E) episodes (at
// least one) are held out for validation, the others train. The rewards
// (EpisodeTokenRewards), where filled, are split alike.
struct EpisodeSplit {
  std::vector<at::Tensor> train;
  std::vector<at::Tensor> validation;
  std::vector<at::Tensor> train_rewards;
  std::vector<at::Tensor> validation_rewards;
};

// Throws std::invalid_argument when the fraction is outside (0, 1) or
// `sequences` holds fewer than 2 episodes (`source` names where they came
// from in the message).
EpisodeSplit SplitEpisodes(std::vector<at::Tensor> sequences, double validation_fraction,
                           const std::string& source);

// The episodes of one or more datasets for training, with their rewards.
// Each dataset is split as SplitEpisodes does and the splits are joined, so
// validation holds episodes of every dataset (e.g. of the nominal and of a
// randomized simulator). `info` is the first dataset's; `layout` as
// DatasetLayout.
struct TrainingData {
  envs::DatasetInfo info;
  worldmodel::TokenLayout layout;
  EpisodeSplit split;
};

// With a `tokenizer` the observations are the latents of the datasets'
// frames (frame_latents.h: LatentDataset). Throws std::invalid_argument
// naming the files when there are none, or when the datasets differ in
// task, observation or action size or control rate (physics steps per
// control step), as SplitEpisodes, and as LatentDataset.
TrainingData LoadTrainingData(const std::vector<std::string>& paths, bool observation_deltas,
                              double validation_fraction,
                              worldmodel::FrameAutoencoderImpl* tokenizer = nullptr);

// Fits the normalizer on the training episodes and normalizes both splits
// in place with it.
worldmodel::Normalizer FitAndNormalize(EpisodeSplit& split);
// Normalizes both splits in place with a given normalizer (a model's).
void NormalizeSplit(EpisodeSplit& split, const worldmodel::Normalizer& normalizer);

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_DATASET_TOKENS_H_
