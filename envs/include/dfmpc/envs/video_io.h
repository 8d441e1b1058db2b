// Writing rendered RGB frames (height * width * 3 bytes, rows top to bottom)
// as an H.264 MP4 video through Debian's ffmpeg program.
#ifndef DFMPC_ENVS_VIDEO_IO_H_
#define DFMPC_ENVS_VIDEO_IO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::envs {

// Runs the `ffmpeg` found in PATH, feeding it the frames, and writes the video
// atomically (temporary file, then rename): yuv420p, so odd sizes are padded
// to even with black, and the index at the front for streaming. Throws
// std::invalid_argument for no frames, a frame of the wrong size or
// frames_per_second < 1, and std::runtime_error when ffmpeg is missing or
// fails (with the end of its error output) or the file cannot be written.
// Safe while other threads run: the process's signal handling is untouched.
void WriteMp4(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames,
              int width, int height, int frames_per_second);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_VIDEO_IO_H_
