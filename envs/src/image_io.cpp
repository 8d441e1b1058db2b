#include "dfmpc/envs/image_io.h"

#include <fcntl.h>
#include <gif_lib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <stdexcept>
#include <string>

#include "atomic_file.h"

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace dfmpc::envs {
namespace {

constexpr int kRedLevels = 6;
constexpr int kGreenLevels = 7;
constexpr int kBlueLevels = 6;

void CheckFrame(const std::vector<std::uint8_t>& rgb, int width, int height) {
  if (width < 1 || height < 1) throw std::invalid_argument("image size must be positive");
  if (rgb.size() != static_cast<std::size_t>(width) * height * 3) {
    throw std::invalid_argument("image has " + std::to_string(rgb.size()) + " bytes, expected " +
                                std::to_string(width) + "x" + std::to_string(height) + "x3");
  }
}

GifByteType PaletteIndex(const std::uint8_t* pixel) {
  const int r = pixel[0] * kRedLevels / 256;
  const int g = pixel[1] * kGreenLevels / 256;
  const int b = pixel[2] * kBlueLevels / 256;
  return static_cast<GifByteType>((r * kGreenLevels + g) * kBlueLevels + b);
}

ColorMapObject* MakePalette() {
  ColorMapObject* palette = GifMakeMapObject(256, nullptr);
  if (palette == nullptr) throw std::runtime_error("GIF: cannot allocate a palette");
  for (int r = 0; r < kRedLevels; ++r) {
    for (int g = 0; g < kGreenLevels; ++g) {
      for (int b = 0; b < kBlueLevels; ++b) {
        GifColorType& color = palette->Colors[(r * kGreenLevels + g) * kBlueLevels + b];
        color.Red = static_cast<GifByteType>(r * 255 / (kRedLevels - 1));
        color.Green = static_cast<GifByteType>(g * 255 / (kGreenLevels - 1));
        color.Blue = static_cast<GifByteType>(b * 255 / (kBlueLevels - 1));
      }
    }
  }
  return palette;
}

// Writes all GIF records; returns false on the first giflib failure.
bool PutGif(GifFileType* gif, const std::vector<std::vector<std::uint8_t>>& frames, int width,
            int height, int delay_centiseconds) {
  EGifSetGifVersion(gif, true);
  ColorMapObject* palette = MakePalette();
  const bool screen_ok = EGifPutScreenDesc(gif, width, height, 8, 0, palette) == GIF_OK;
  GifFreeMapObject(palette);
  if (!screen_ok) return false;
  // Netscape application extension: loop forever.
  const GifByteType loop[] = {1, 0, 0};
  if (EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) != GIF_OK ||
      EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") != GIF_OK ||
      EGifPutExtensionBlock(gif, 3, loop) != GIF_OK || EGifPutExtensionTrailer(gif) != GIF_OK) {
    return false;
  }
  GraphicsControlBlock control{DISPOSAL_UNSPECIFIED, false, delay_centiseconds,
                               NO_TRANSPARENT_COLOR};
  GifByteType control_bytes[4];
  EGifGCBToExtension(&control, control_bytes);
  std::vector<GifPixelType> line(width);
  for (const std::vector<std::uint8_t>& frame : frames) {
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, control_bytes) != GIF_OK ||
        EGifPutImageDesc(gif, 0, 0, width, height, false, nullptr) != GIF_OK) {
      return false;
    }
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        line[x] = PaletteIndex(&frame[(static_cast<std::size_t>(y) * width + x) * 3]);
      }
      if (EGifPutLine(gif, line.data(), width) != GIF_OK) return false;
    }
  }
  return true;
}

}  // namespace

void WritePng(const std::string& path, const std::vector<std::uint8_t>& rgb, int width,
              int height) {
  CheckFrame(rgb, width, height);
  internal::AtomicFile file(path);
  if (stbi_write_png(file.temporary_path().c_str(), width, height, 3, rgb.data(), width * 3) == 0) {
    throw std::runtime_error("cannot write PNG '" + path + "'");
  }
  file.Commit();
}

void WriteGif(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames,
              int width, int height, int delay_centiseconds) {
  if (frames.empty()) throw std::invalid_argument("GIF needs at least one frame");
  for (const auto& frame : frames) CheckFrame(frame, width, height);
  if (width > 65535 || height > 65535) throw std::invalid_argument("GIF frames are too large");
  internal::AtomicFile file(path);
  int error = 0;
  // giflib would create the file 0600; write into the one AtomicFile made
  // (0666 & ~umask). EGifOpenFileHandle owns the descriptor from here on.
  const int fd = open(file.temporary_path().c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) {
    throw std::runtime_error("cannot create GIF '" + path + "': " + std::strerror(errno));
  }
  GifFileType* gif = EGifOpenFileHandle(fd, &error);
  if (gif == nullptr) {
    close(fd);
    throw std::runtime_error("cannot create GIF '" + path + "': " + GifErrorString(error));
  }
  const bool written = PutGif(gif, frames, width, height, delay_centiseconds);
  const int write_error = gif->Error;
  const bool closed = EGifCloseFile(gif, &error) == GIF_OK;
  if (!written || !closed) {
    throw std::runtime_error("cannot write GIF '" + path +
                             "': " + GifErrorString(written ? error : write_error));
  }
  file.Commit();
}

}  // namespace dfmpc::envs
