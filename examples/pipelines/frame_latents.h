// Datasets of frames seen through a frame tokenizer: the bridge that lets
// every state-model tool (train, train-mlp) train on latents instead.
#ifndef DFMPC_EXAMPLES_PIPELINES_FRAME_LATENTS_H_
#define DFMPC_EXAMPLES_PIPELINES_FRAME_LATENTS_H_

#include <ATen/core/Tensor.h>

#include <string>

#include "dfmpc/envs/dataset.h"

namespace dfmpc::worldmodel {
class FrameAutoencoderImpl;
}  // namespace dfmpc::worldmodel

namespace dfmpc::pipelines {

// Throws std::invalid_argument naming `path` when `dataset` has no frames or
// frames of another size than the tokenizer's.
void CheckFramesFit(const envs::Dataset& dataset, const std::string& path,
                    const worldmodel::FrameAutoencoderImpl& tokenizer);

// Latents [N, latent] of `count` frames of `dataset` from frame `first`,
// encoded in batches.
at::Tensor EncodeDatasetFrames(const envs::Dataset& dataset, int64_t first, int64_t count,
                               worldmodel::FrameAutoencoderImpl& tokenizer);

// The dataset with observations replaced by the latents of its frames
// (frames dropped). A frame shows o_t of step t, and an episode's last
// step has no frame of its next observation, so each episode loses its last
// step: observations z_0 .. z_{T-2}, next observations z_1 .. z_{T-1},
// actions a_0 .. a_{T-2}. Checks as CheckFramesFit.
envs::Dataset LatentDataset(const envs::Dataset& dataset, const std::string& path,
                            worldmodel::FrameAutoencoderImpl& tokenizer);

}  // namespace dfmpc::pipelines

#endif  // DFMPC_EXAMPLES_PIPELINES_FRAME_LATENTS_H_
