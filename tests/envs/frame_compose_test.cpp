#include "dfmpc/envs/frame_compose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace dfmpc::envs {
namespace {

using Colour = std::array<std::uint8_t, 3>;

constexpr Colour kBlack = {0, 0, 0};
constexpr Colour kWhite = {255, 255, 255};

Colour PixelOf(const RgbImage& image, int x, int y) {
  const std::size_t i = (static_cast<std::size_t>(y) * image.width + x) * 3;
  return {image.pixels[i], image.pixels[i + 1], image.pixels[i + 2]};
}

int CountPixels(const RgbImage& image, Colour colour) {
  int count = 0;
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) count += PixelOf(image, x, y) == colour;
  }
  return count;
}

RgbImage Ramp(int width, int height) {
  RgbImage image = MakeImage(width, height, kBlack);
  for (std::size_t i = 0; i < image.pixels.size(); ++i) {
    image.pixels[i] = static_cast<std::uint8_t>(i * 11);
  }
  return image;
}

TEST(FrameComposeTest, MakeImageFillsEveryPixel) {
  const RgbImage image = MakeImage(4, 3, {1, 2, 3});
  EXPECT_EQ(image.width, 4);
  EXPECT_EQ(image.height, 3);
  ASSERT_EQ(image.pixels.size(), 36u);
  EXPECT_EQ(CountPixels(image, {1, 2, 3}), 12);
  EXPECT_THROW(MakeImage(-1, 3, kBlack), std::invalid_argument);
}

TEST(FrameComposeTest, AbsoluteDifferenceIsPerByte) {
  const RgbImage a = Ramp(5, 4);
  EXPECT_EQ(CountPixels(AbsoluteDifference(a, a), kBlack), 20);
  const RgbImage dark = MakeImage(1, 1, {10, 200, 7});
  const RgbImage light = MakeImage(1, 1, {250, 20, 7});
  EXPECT_EQ(PixelOf(AbsoluteDifference(dark, light), 0, 0), (Colour{240, 180, 0}));
  EXPECT_EQ(PixelOf(AbsoluteDifference(light, dark), 0, 0), (Colour{240, 180, 0}));
  EXPECT_THROW(AbsoluteDifference(a, Ramp(4, 5)), std::invalid_argument);
  EXPECT_THROW(AbsoluteDifference(a, RgbImage{5, 4, {1, 2, 3}}), std::invalid_argument);
}

TEST(FrameComposeTest, UpscaleRepeatsEachPixel) {
  const RgbImage image = Ramp(2, 3);
  const RgbImage scaled = Upscale(image, 3);
  EXPECT_EQ(scaled.width, 6);
  EXPECT_EQ(scaled.height, 9);
  for (int y = 0; y < 9; ++y) {
    for (int x = 0; x < 6; ++x) EXPECT_EQ(PixelOf(scaled, x, y), PixelOf(image, x / 3, y / 3));
  }
  EXPECT_EQ(Upscale(image, 1).pixels, image.pixels);
  EXPECT_THROW(Upscale(image, 0), std::invalid_argument);
}

TEST(FrameComposeTest, ConcatenatesSideBySideWithGaps) {
  const RgbImage a = Ramp(3, 2);
  const RgbImage b = MakeImage(4, 2, {9, 9, 9});
  const RgbImage row = ConcatenateHorizontally({a, b, a}, 2, {1, 2, 3});
  EXPECT_EQ(row.width, 3 + 2 + 4 + 2 + 3);
  EXPECT_EQ(row.height, 2);
  for (int y = 0; y < 2; ++y) {
    EXPECT_EQ(PixelOf(row, 2, y), PixelOf(a, 2, y));
    EXPECT_EQ(PixelOf(row, 3, y), (Colour{1, 2, 3}));
    EXPECT_EQ(PixelOf(row, 4, y), (Colour{1, 2, 3}));
    EXPECT_EQ(PixelOf(row, 5, y), (Colour{9, 9, 9}));
    EXPECT_EQ(PixelOf(row, 11, y), PixelOf(a, 0, y));
  }
  EXPECT_EQ(ConcatenateHorizontally({a}, 5, kWhite).pixels, a.pixels);
  EXPECT_THROW(ConcatenateHorizontally({a, Ramp(3, 3)}, 0, kBlack), std::invalid_argument);
  EXPECT_THROW(ConcatenateHorizontally({}, 0, kBlack), std::invalid_argument);
  EXPECT_THROW(ConcatenateHorizontally({a, a}, -1, kBlack), std::invalid_argument);
}

TEST(FrameComposeTest, ConcatenatesTopToBottomWithGaps) {
  const RgbImage a = Ramp(3, 2);
  const RgbImage b = MakeImage(3, 4, {9, 9, 9});
  const RgbImage column = ConcatenateVertically({a, b}, 1, {1, 2, 3});
  EXPECT_EQ(column.width, 3);
  EXPECT_EQ(column.height, 2 + 1 + 4);
  for (int x = 0; x < 3; ++x) {
    EXPECT_EQ(PixelOf(column, x, 1), PixelOf(a, x, 1));
    EXPECT_EQ(PixelOf(column, x, 2), (Colour{1, 2, 3}));
    EXPECT_EQ(PixelOf(column, x, 3), (Colour{9, 9, 9}));
    EXPECT_EQ(PixelOf(column, x, 6), (Colour{9, 9, 9}));
  }
  EXPECT_THROW(ConcatenateVertically({a, Ramp(2, 2)}, 0, kBlack), std::invalid_argument);
}

TEST(FrameComposeTest, DrawsTheGlyphOfOne) {
  RgbImage image = MakeImage(10, 10, kBlack);
  DrawText(image, 2, 1, "1", kWhite);
  // The glyph's rows, ".#..." style, placed at column 2, row 1.
  const char* const kOne[] = {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."};
  int lit = 0;
  for (int row = 0; row < 7; ++row) {
    for (int column = 0; column < 5; ++column) {
      const bool on = kOne[row][column] == '#';
      lit += on;
      EXPECT_EQ(PixelOf(image, 2 + column, 1 + row), on ? kWhite : kBlack) << row << "," << column;
    }
  }
  EXPECT_EQ(CountPixels(image, kWhite), lit);
}

TEST(FrameComposeTest, ScalesGlyphsAndDrawsLowercaseAsUppercase) {
  RgbImage small = MakeImage(20, 10, kBlack);
  DrawText(small, 0, 0, "1", kWhite);
  RgbImage large = MakeImage(40, 20, kBlack);
  DrawText(large, 0, 0, "1", kWhite, 2);
  EXPECT_EQ(large.pixels, Upscale(small, 2).pixels);

  RgbImage upper = MakeImage(40, 10, kBlack);
  RgbImage lower = upper;
  DrawText(upper, 1, 1, "STEP", kWhite);
  DrawText(lower, 1, 1, "step", kWhite);
  EXPECT_EQ(upper.pixels, lower.pixels);
  EXPECT_GT(CountPixels(upper, kWhite), 0);
  EXPECT_EQ(TextWidth("STEP 12"), 42);
  EXPECT_EQ(TextWidth("STEP 12", 2), 84);
}

TEST(FrameComposeTest, ClipsTextAtTheEdges) {
  RgbImage image = MakeImage(8, 6, kBlack);
  const std::string all = "0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ=-.:/|()%";
  for (int x : {-1000, -7, -3, 0, 5, 7, 8, 1000}) {
    for (int y : {-1000, -5, -2, 3, 5, 6, 1000}) DrawText(image, x, y, all, kWhite, 3);
  }
  DrawText(image, 2147483000, 2147483000, all, kWhite, 100);
  DrawText(image, -2147483000, -2147483000, all, kWhite, 100);
  EXPECT_GT(CountPixels(image, kWhite), 0);
  EXPECT_EQ(image.pixels.size(), 8u * 6 * 3);
}

TEST(FrameComposeTest, RejectsUnsupportedCharacters) {
  RgbImage image = MakeImage(30, 10, kBlack);
  try {
    DrawText(image, 0, 0, "AB_C", kWhite);
    FAIL() << "'_' accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("'_'"), std::string::npos) << error.what();
  }
  EXPECT_EQ(CountPixels(image, kBlack), 300);  // nothing drawn
  EXPECT_THROW(DrawText(image, 0, 0, "A\nB", kWhite), std::invalid_argument);
  EXPECT_THROW(DrawText(image, 0, 0, "A", kWhite, 0), std::invalid_argument);
}

TEST(FrameComposeTest, LabelBarSitsAboveTheImage) {
  const RgbImage image = Ramp(40, 12);
  const RgbImage labelled = WithLabelBar(image, "Truth", 2);
  EXPECT_EQ(LabelBarHeight(2), 22);
  EXPECT_EQ(labelled.width, 40);
  EXPECT_EQ(labelled.height, 12 + LabelBarHeight(2));
  const std::size_t bar_bytes = static_cast<std::size_t>(LabelBarHeight(2)) * 40 * 3;
  EXPECT_TRUE(std::equal(image.pixels.begin(), image.pixels.end(),
                         labelled.pixels.begin() + static_cast<std::ptrdiff_t>(bar_bytes)));
  const RgbImage bar{
      40,
      LabelBarHeight(2),
      {labelled.pixels.begin(), labelled.pixels.begin() + static_cast<std::ptrdiff_t>(bar_bytes)}};
  const Colour background = PixelOf(bar, 0, 0);
  const int dark = CountPixels(bar, background);
  EXPECT_LT(background[0], 64);
  EXPECT_GT(dark, 0);
  EXPECT_LT(dark, bar.width * bar.height);
  // A label wider than the image is clipped, not an error.
  EXPECT_EQ(WithLabelBar(image, "A MUCH TOO LONG LABEL").height, 12 + LabelBarHeight());
}

}  // namespace
}  // namespace dfmpc::envs
