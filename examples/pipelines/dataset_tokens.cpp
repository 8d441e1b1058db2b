#include "dataset_tokens.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "frame_latents.h"

namespace dfmpc::pipelines {

at::Tensor CopyRows(const envs::RowMatrixXf& matrix, int64_t first, int64_t count) {
  const int64_t cols = matrix.cols();
  return at::from_blob(const_cast<float*>(matrix.data()) + first * cols, {count, cols}, at::kFloat)
      .clone();
}

void CheckSameData(const envs::DatasetInfo& info, const std::string& path,
                   const envs::DatasetInfo& first, const std::string& first_path) {
  if (info.task != first.task || info.observation_size != first.observation_size ||
      info.action_size != first.action_size || info.action_repeat != first.action_repeat) {
    throw std::invalid_argument(
        "--data: " + path + " (" + info.task + ", " + std::to_string(info.action_repeat) +
        " physics step(s) per control step) does not match " + first_path + " (" + first.task +
        ", " + std::to_string(first.action_repeat) + ")");
  }
}

worldmodel::TokenLayout DatasetLayout(const envs::Dataset& dataset, bool observation_deltas) {
  return worldmodel::TokenLayout{dataset.info.action_size, dataset.info.observation_size,
                                 observation_deltas};
}

std::vector<at::Tensor> EpisodeTokenSequences(const envs::Dataset& dataset,
                                              const worldmodel::TokenLayout& layout) {
  std::vector<at::Tensor> sequences;
  for (int e = 0; e < dataset.num_episodes(); ++e) {
    const int64_t start = dataset.episode_starts[e];
    const int64_t length = dataset.episode_lengths[e];
    const at::Tensor observations =
        at::cat({CopyRows(dataset.observations, start, length),
                 CopyRows(dataset.next_observations, start + length - 1, 1)});
    sequences.push_back(
        worldmodel::EpisodeTokens(layout, observations, CopyRows(dataset.actions, start, length)));
  }
  return sequences;
}

std::vector<at::Tensor> EpisodeRewards(const envs::Dataset& dataset) {
  std::vector<at::Tensor> sequences;
  const at::Tensor rewards = at::from_blob(const_cast<float*>(dataset.rewards.data()),
                                           {dataset.rewards.size()}, at::kFloat);
  for (int e = 0; e < dataset.num_episodes(); ++e) {
    sequences.push_back(
        rewards.narrow(0, dataset.episode_starts[e], dataset.episode_lengths[e]).clone());
  }
  return sequences;
}

std::vector<at::Tensor> EpisodeTokenRewards(const envs::Dataset& dataset) {
  std::vector<at::Tensor> sequences = EpisodeRewards(dataset);
  for (at::Tensor& rewards : sequences) rewards = at::cat({rewards.narrow(0, 0, 1), rewards});
  return sequences;
}

EpisodeSplit SplitEpisodes(std::vector<at::Tensor> sequences, double validation_fraction,
                           const std::string& source) {
  if (!(validation_fraction > 0 && validation_fraction < 1)) {
    throw std::invalid_argument("--validation-fraction must be in (0, 1)");
  }
  if (sequences.size() < 2) {
    throw std::invalid_argument(source + " holds " + std::to_string(sequences.size()) +
                                " episode(s); training needs at least 2 (one for validation)");
  }
  const size_t num_validation =
      std::max<size_t>(1, static_cast<size_t>(std::lround(validation_fraction * sequences.size())));
  EpisodeSplit split;
  split.validation.assign(sequences.end() - num_validation, sequences.end());
  sequences.resize(sequences.size() - num_validation);
  split.train = std::move(sequences);
  return split;
}

TrainingData LoadTrainingData(const std::vector<std::string>& paths, bool observation_deltas,
                              double validation_fraction,
                              worldmodel::FrameAutoencoderImpl* tokenizer) {
  if (paths.empty()) throw std::invalid_argument("--data: no dataset given");
  TrainingData data;
  for (const std::string& path : paths) {
    envs::Dataset dataset = envs::ReadDataset(path, /*load_frames=*/tokenizer != nullptr);
    if (tokenizer != nullptr) dataset = LatentDataset(dataset, path, *tokenizer);
    const envs::DatasetInfo& info = dataset.info;
    if (path == paths.front()) {
      data.info = info;
      data.layout = DatasetLayout(dataset, observation_deltas);
    } else {
      CheckSameData(info, path, data.info, paths.front());
    }
    EpisodeSplit split =
        SplitEpisodes(EpisodeTokenSequences(dataset, data.layout), validation_fraction, path);
    EpisodeSplit rewards = SplitEpisodes(EpisodeTokenRewards(dataset), validation_fraction, path);
    for (auto [from, to] : {std::pair{&split.train, &data.split.train},
                            std::pair{&split.validation, &data.split.validation},
                            std::pair{&rewards.train, &data.split.train_rewards},
                            std::pair{&rewards.validation, &data.split.validation_rewards}}) {
      to->insert(to->end(), from->begin(), from->end());
    }
  }
  return data;
}

worldmodel::Normalizer FitAndNormalize(EpisodeSplit& split) {
  const worldmodel::Normalizer normalizer = worldmodel::Normalizer::Fit(split.train);
  NormalizeSplit(split, normalizer);
  return normalizer;
}

void NormalizeSplit(EpisodeSplit& split, const worldmodel::Normalizer& normalizer) {
  for (auto* part : {&split.train, &split.validation}) {
    for (at::Tensor& s : *part) s = normalizer.Normalize(s);
  }
}

}  // namespace dfmpc::pipelines
