// Similarity of a rendered RGB frame (height * width * 3 bytes, rows top to
// bottom) to a reference frame of the same size, e.g. a model's predicted
// frame against the simulator's. Both throw std::invalid_argument naming the
// sizes when a frame does not have width * height * 3 bytes.
#ifndef DFMPC_ENVS_IMAGE_METRICS_H_
#define DFMPC_ENVS_IMAGE_METRICS_H_

#include <cstdint>
#include <vector>

namespace dfmpc::envs {

// Peak signal-to-noise ratio in dB over all pixels and channels, peak 255;
// +infinity for identical frames.
double FramePsnrBytes(const std::vector<std::uint8_t>& frame,
                      const std::vector<std::uint8_t>& reference, int width, int height);

// Structural similarity (Wang et al. 2004) in [-1, 1], 1 for identical frames:
// 11x11 Gaussian window (sigma 1.5), per RGB channel over the windows that
// lie fully inside the frame, averaged over positions and channels. Frames
// smaller than 11x11 throw std::invalid_argument.
double FrameSsim(const std::vector<std::uint8_t>& frame, const std::vector<std::uint8_t>& reference,
                 int width, int height);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_IMAGE_METRICS_H_
