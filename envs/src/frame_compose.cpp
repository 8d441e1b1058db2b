#include "dfmpc/envs/frame_compose.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "bitmap_font.h"

namespace dfmpc::envs {
namespace {

constexpr int kCellWidth = kGlyphWidth + 1;
constexpr int kMargin = 2;
constexpr std::array<std::uint8_t, 3> kBarColour = {32, 32, 32};
constexpr std::array<std::uint8_t, 3> kLabelColour = {235, 235, 235};

std::string SizeText(const RgbImage& image) {
  return std::to_string(image.width) + "x" + std::to_string(image.height);
}

void CheckImage(const RgbImage& image) {
  if (image.width < 0 || image.height < 0 ||
      image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 3) {
    throw std::invalid_argument("image of size " + SizeText(image) + " has " +
                                std::to_string(image.pixels.size()) + " bytes, expected " +
                                SizeText(image) + "x3");
  }
}

void CheckScale(int scale) {
  if (scale < 1) {
    throw std::invalid_argument("text scale must be >= 1, got " + std::to_string(scale));
  }
}

std::uint8_t* PixelAt(RgbImage& image, int x, int y) {
  return &image.pixels[(static_cast<std::size_t>(y) * image.width + x) * 3];
}

const std::uint8_t* PixelAt(const RgbImage& image, int x, int y) {
  return &image.pixels[(static_cast<std::size_t>(y) * image.width + x) * 3];
}

// 64-bit corners: text placed far outside the image must not overflow.
void FillClipped(RgbImage& image, std::int64_t x0, std::int64_t y0, std::int64_t width,
                 std::int64_t height, std::array<std::uint8_t, 3> colour) {
  const std::int64_t x1 = std::min<std::int64_t>(image.width, x0 + width);
  const std::int64_t y1 = std::min<std::int64_t>(image.height, y0 + height);
  for (std::int64_t y = std::max<std::int64_t>(0, y0); y < y1; ++y) {
    for (std::int64_t x = std::max<std::int64_t>(0, x0); x < x1; ++x) {
      std::copy(colour.begin(), colour.end(),
                PixelAt(image, static_cast<int>(x), static_cast<int>(y)));
    }
  }
}

void CheckConcatenation(const std::vector<RgbImage>& images, int gap) {
  if (images.empty()) throw std::invalid_argument("no images to concatenate");
  if (gap < 0) throw std::invalid_argument("gap must be >= 0, got " + std::to_string(gap));
  for (const RgbImage& image : images) CheckImage(image);
}

}  // namespace

RgbImage MakeImage(int width, int height, std::array<std::uint8_t, 3> fill) {
  if (width < 0 || height < 0) {
    throw std::invalid_argument("image size " + std::to_string(width) + "x" +
                                std::to_string(height) + " is negative");
  }
  RgbImage image{width, height,
                 std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3)};
  FillClipped(image, 0, 0, width, height, fill);
  return image;
}

RgbImage AbsoluteDifference(const RgbImage& a, const RgbImage& b) {
  CheckImage(a);
  CheckImage(b);
  if (a.width != b.width || a.height != b.height) {
    throw std::invalid_argument("cannot subtract images of sizes " + SizeText(a) + " and " +
                                SizeText(b));
  }
  RgbImage difference = a;
  for (std::size_t i = 0; i < difference.pixels.size(); ++i) {
    difference.pixels[i] = static_cast<std::uint8_t>(std::abs(a.pixels[i] - b.pixels[i]));
  }
  return difference;
}

RgbImage Upscale(const RgbImage& image, int factor) {
  CheckImage(image);
  if (factor < 1) {
    throw std::invalid_argument("upscale factor must be >= 1, got " + std::to_string(factor));
  }
  RgbImage scaled = MakeImage(image.width * factor, image.height * factor, {0, 0, 0});
  for (int y = 0; y < scaled.height; ++y) {
    for (int x = 0; x < scaled.width; ++x) {
      const std::uint8_t* source = PixelAt(image, x / factor, y / factor);
      std::copy(source, source + 3, PixelAt(scaled, x, y));
    }
  }
  return scaled;
}

RgbImage ConcatenateHorizontally(const std::vector<RgbImage>& images, int gap,
                                 std::array<std::uint8_t, 3> gap_colour) {
  CheckConcatenation(images, gap);
  int width = gap * static_cast<int>(images.size() - 1);
  for (const RgbImage& image : images) {
    if (image.height != images[0].height) {
      throw std::invalid_argument("cannot place images of sizes " + SizeText(images[0]) + " and " +
                                  SizeText(image) + " side by side: heights differ");
    }
    width += image.width;
  }
  RgbImage result = MakeImage(width, images[0].height, gap_colour);
  int left = 0;
  for (const RgbImage& image : images) {
    for (int y = 0; y < image.height; ++y) {
      const std::uint8_t* row = PixelAt(image, 0, y);
      std::copy(row, row + image.width * 3, PixelAt(result, left, y));
    }
    left += image.width + gap;
  }
  return result;
}

RgbImage ConcatenateVertically(const std::vector<RgbImage>& images, int gap,
                               std::array<std::uint8_t, 3> gap_colour) {
  CheckConcatenation(images, gap);
  int height = gap * static_cast<int>(images.size() - 1);
  for (const RgbImage& image : images) {
    if (image.width != images[0].width) {
      throw std::invalid_argument("cannot stack images of sizes " + SizeText(images[0]) + " and " +
                                  SizeText(image) + ": widths differ");
    }
    height += image.height;
  }
  RgbImage result = MakeImage(images[0].width, height, gap_colour);
  auto out = result.pixels.begin();
  for (const RgbImage& image : images) {
    out = std::copy(image.pixels.begin(), image.pixels.end(), out);
    if (&image != &images.back()) out += static_cast<std::ptrdiff_t>(gap) * result.width * 3;
  }
  return result;
}

void DrawText(RgbImage& image, int x, int y, const std::string& text,
              std::array<std::uint8_t, 3> colour, int scale) {
  CheckImage(image);
  CheckScale(scale);
  std::vector<const GlyphRows*> glyphs;
  for (char c : text) {
    const GlyphRows* glyph = FindGlyph(c);
    if (glyph == nullptr) {
      throw std::invalid_argument("DrawText: the font has no character '" + std::string(1, c) +
                                  "' (code " + std::to_string(static_cast<unsigned char>(c)) + ")");
    }
    glyphs.push_back(glyph);
  }
  for (std::size_t i = 0; i < glyphs.size(); ++i) {
    const std::int64_t left = x + static_cast<std::int64_t>(i) * kCellWidth * scale;
    for (int row = 0; row < kGlyphHeight; ++row) {
      for (int column = 0; column < kGlyphWidth; ++column) {
        if (((*glyphs[i])[row] >> (kGlyphWidth - 1 - column) & 1) == 0) continue;
        FillClipped(image, left + std::int64_t{column} * scale, y + std::int64_t{row} * scale,
                    scale, scale, colour);
      }
    }
  }
}

int TextWidth(const std::string& text, int scale) {
  CheckScale(scale);
  return static_cast<int>(text.size()) * kCellWidth * scale;
}

int LabelBarHeight(int scale) {
  CheckScale(scale);
  return (kGlyphHeight + 2 * kMargin) * scale;
}

RgbImage WithLabelBar(const RgbImage& image, const std::string& label, int scale) {
  CheckImage(image);
  RgbImage bar = MakeImage(image.width, LabelBarHeight(scale), kBarColour);
  // The visible text ends before the last cell's spacing column.
  const int ink_width = TextWidth(label, scale) - scale;
  const int left = std::max(kMargin * scale, (image.width - ink_width) / 2);
  DrawText(bar, left, kMargin * scale, label, kLabelColour, scale);
  return ConcatenateVertically({bar, image}, 0, kBarColour);
}

}  // namespace dfmpc::envs
