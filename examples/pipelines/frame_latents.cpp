#include "frame_latents.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <stdexcept>

#include "dfmpc/worldmodel/frame_tokenizer.h"

namespace dfmpc::pipelines {
namespace {

constexpr int64_t kEncodeBatch = 256;

}  // namespace

void CheckFramesFit(const envs::Dataset& dataset, const std::string& path,
                    const worldmodel::FrameAutoencoderImpl& tokenizer) {
  const envs::DatasetInfo& info = dataset.info;
  if (info.frame_width == 0 || dataset.frames.empty()) {
    throw std::invalid_argument("dataset " + path +
                                " has no frames: collect it with `dfmpc collect --frames " +
                                std::to_string(tokenizer.config().width) + "x" +
                                std::to_string(tokenizer.config().height) + "`");
  }
  if (info.frame_width != tokenizer.config().width ||
      info.frame_height != tokenizer.config().height) {
    throw std::invalid_argument(
        "dataset " + path + " has " + std::to_string(info.frame_width) + "x" +
        std::to_string(info.frame_height) + " frames, the tokenizer takes " +
        std::to_string(tokenizer.config().width) + "x" + std::to_string(tokenizer.config().height));
  }
}

at::Tensor EncodeDatasetFrames(const envs::Dataset& dataset, int64_t first, int64_t count,
                               worldmodel::FrameAutoencoderImpl& tokenizer) {
  const int64_t h = dataset.info.frame_height, w = dataset.info.frame_width;
  const at::Tensor frames = at::from_blob(const_cast<std::uint8_t*>(dataset.frames.data()),
                                          {dataset.num_steps(), h, w, 3}, at::kByte);
  c10::InferenceMode inference;
  std::vector<at::Tensor> latents;
  for (int64_t begin = first; begin < first + count; begin += kEncodeBatch) {
    const int64_t n = std::min(kEncodeBatch, first + count - begin);
    latents.push_back(tokenizer.Encode(frames.narrow(0, begin, n)));
  }
  return latents.empty() ? at::zeros({0, tokenizer.config().latent_dim}) : at::cat(latents).cpu();
}

envs::Dataset LatentDataset(const envs::Dataset& dataset, const std::string& path,
                            worldmodel::FrameAutoencoderImpl& tokenizer) {
  CheckFramesFit(dataset, path, tokenizer);
  const int latent = tokenizer.config().latent_dim;
  envs::Dataset out;
  out.info = dataset.info;
  out.info.observation_size = latent;
  out.info.frame_width = out.info.frame_height = 0;
  int64_t steps = 0;
  for (int e = 0; e < dataset.num_episodes(); ++e) {
    steps += std::max<int64_t>(0, dataset.episode_lengths[e] - 1);
  }
  out.observations.resize(steps, latent);
  out.next_observations.resize(steps, latent);
  out.actions.resize(steps, dataset.info.action_size);
  out.rewards.resize(steps);
  out.terminals.assign(steps, 0);
  out.timeouts.assign(steps, 0);
  int64_t row = 0;
  for (int e = 0; e < dataset.num_episodes(); ++e) {
    const int64_t start = dataset.episode_starts[e];
    const int64_t length = dataset.episode_lengths[e] - 1;
    if (length < 1) continue;
    const at::Tensor z = EncodeDatasetFrames(dataset, start, length + 1, tokenizer).contiguous();
    const Eigen::Map<const envs::RowMatrixXf> latents(z.data_ptr<float>(), length + 1, latent);
    out.observations.middleRows(row, length) = latents.topRows(length);
    out.next_observations.middleRows(row, length) = latents.bottomRows(length);
    out.actions.middleRows(row, length) = dataset.actions.middleRows(start, length);
    out.rewards.segment(row, length) = dataset.rewards.segment(start, length);
    out.episode_starts.push_back(row);
    out.episode_lengths.push_back(length);
    out.episode_returns.push_back(dataset.episode_returns[e]);
    out.episode_success.push_back(dataset.episode_success[e]);
    out.episode_perturbations.push_back(dataset.episode_perturbations[e]);
    row += length;
  }
  return out;
}

}  // namespace dfmpc::pipelines
