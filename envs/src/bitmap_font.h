// A 5x7 pixel bitmap font for labels in debug images: digits, uppercase
// letters, space and = - . : / | ( ) %.
#ifndef DFMPC_ENVS_SRC_BITMAP_FONT_H_
#define DFMPC_ENVS_SRC_BITMAP_FONT_H_

#include <array>
#include <cstdint>

namespace dfmpc::envs {

constexpr int kGlyphWidth = 5;
constexpr int kGlyphHeight = 7;

// Rows top to bottom; bit 4 of each row is the leftmost column.
using GlyphRows = std::array<std::uint8_t, kGlyphHeight>;

// The glyph of `c` (lowercase letters map to uppercase), or nullptr when
// the font does not cover it.
const GlyphRows* FindGlyph(char c);

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_BITMAP_FONT_H_
