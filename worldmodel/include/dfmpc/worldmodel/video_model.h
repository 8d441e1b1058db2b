// A video world model in one file: a frame tokenizer (frame_tokenizer.h) and
// a diffusion-forcing transformer over tokens [a_{t-1}, z_t, z_t - z_{t-1}]
// whose "observations" z_t are the tokenizer's latents of the frames. The
// two halves are trained apart (`dfmpc train-frames`, then `dfmpc train
// --tokenizer`) and saved together, so a transformer can never meet a
// tokenizer whose latents it was not trained on.
#ifndef DFMPC_WORLDMODEL_VIDEO_MODEL_H_
#define DFMPC_WORLDMODEL_VIDEO_MODEL_H_

#include <string>

#include "dfmpc/worldmodel/checkpoint.h"
#include "dfmpc/worldmodel/frame_tokenizer.h"

namespace dfmpc::worldmodel {

struct VideoModel {
  Checkpoint world;  // the transformer; its observations are latents
  FrameTokenizerCheckpoint tokenizer;
};

// Written atomically with a checksum, like every model file. Throws
// std::invalid_argument when the transformer's observation size is not the
// tokenizer's latent size, or as SaveCheckpoint.
void SaveVideoModel(const std::string& path, const ModelInfo& info, const Normalizer& normalizer,
                    DfTransformerImpl& model, const FrameTokenizerCheckpoint& tokenizer);

// Throws std::runtime_error naming the file and the problem: missing,
// corrupt, a state model or another kind of file, another format version,
// halves that do not fit, or a mismatch with `expect` (task; token_dim is
// the transformer's). Both halves in eval mode, on `device`.
VideoModel LoadVideoModel(const std::string& path, const CheckpointExpectation& expect = {},
                          c10::Device device = c10::Device(c10::kCPU));

// True when `path` is a readable video model file (of this format version).
bool IsVideoModelFile(const std::string& path);

// Human-readable summary (for `dfmpc info`).
std::string DescribeVideoModel(const VideoModel& model);

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_VIDEO_MODEL_H_
