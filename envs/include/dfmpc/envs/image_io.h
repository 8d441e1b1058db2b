// Writing rendered RGB frames (height * width * 3 bytes, rows top to bottom)
// as PNG images and animated GIFs. Both write atomically (temporary file,
// then rename) and throw std::runtime_error or std::invalid_argument with
// the reason on failure.
#ifndef DFMPC_ENVS_IMAGE_IO_H_
#define DFMPC_ENVS_IMAGE_IO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::envs {

void WritePng(const std::string& path, const std::vector<std::uint8_t>& rgb, int width,
              int height);

// Frames share one 252-colour palette (6 x 7 x 6 levels of red, green, blue)
// and loop forever; `delay_centiseconds` is the time each frame shows.
void WriteGif(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames,
              int width, int height, int delay_centiseconds = 4);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_IMAGE_IO_H_
