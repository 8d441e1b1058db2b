// Compositing RGB frames into debug images and videos: differences, nearest
// neighbour upscaling, side-by-side layouts and text labels drawn with a
// built-in 5x7 pixel font. Every function throws std::invalid_argument when
// an image's pixels do not hold width * height * 3 bytes or an argument is
// out of range.
#ifndef DFMPC_ENVS_FRAME_COMPOSE_H_
#define DFMPC_ENVS_FRAME_COMPOSE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dfmpc::envs {

// height * width * 3 bytes, rows top to bottom, RGB: the layout of rendered
// frames, so RgbImage{width, height, frame} wraps one.
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;
};

// An image of non-negative size filled with one colour.
RgbImage MakeImage(int width, int height, std::array<std::uint8_t, 3> fill);

// Per byte |a - b|; the images must have the same size.
RgbImage AbsoluteDifference(const RgbImage& a, const RgbImage& b);

// Each pixel becomes a factor x factor block (factor >= 1).
RgbImage Upscale(const RgbImage& image, int factor);

// Left to right (all the same height) or top to bottom (all the same width),
// `gap` pixels of `gap_colour` between neighbours; at least one image.
RgbImage ConcatenateHorizontally(const std::vector<RgbImage>& images, int gap,
                                 std::array<std::uint8_t, 3> gap_colour);
RgbImage ConcatenateVertically(const std::vector<RgbImage>& images, int gap,
                               std::array<std::uint8_t, 3> gap_colour);

// Draws `text` with its top-left corner at (x, y). Each character takes a
// cell of 6 x 8 pixels (5 x 7 glyph, then one column and row of spacing),
// each font pixel a scale x scale block. Covers 0-9, A-Z (lowercase is drawn
// as uppercase), space and = - . : / | ( ) %; any other character throws
// std::invalid_argument naming it, before anything is drawn. Pixels outside
// the image are skipped.
void DrawText(RgbImage& image, int x, int y, const std::string& text,
              std::array<std::uint8_t, 3> colour, int scale = 1);

// The width of DrawText's cells for `text`, trailing spacing column included.
int TextWidth(const std::string& text, int scale = 1);

// The height of WithLabelBar's bar: the glyphs and a margin of 2 * scale
// pixels above and below them.
int LabelBarHeight(int scale = 1);

// `image` under a dark bar with `label` in light text, centred (clipped on the
// right when wider than the image), e.g. "TRUTH" or "STEP 12".
RgbImage WithLabelBar(const RgbImage& image, const std::string& label, int scale = 1);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_FRAME_COMPOSE_H_
