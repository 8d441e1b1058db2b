// The vectorized conversions around the CPU's bfloat16 products against
// LibTorch's own, bit for bit, on every kind of float and every tail length.
#include "bf16_rows.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace dfmpc::worldmodel {
namespace {

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Bit for bit where not a NaN, and NaN where the other is (LibTorch's
// vectorized and scalar conversions write NaNs differently themselves).
bool SameBits(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor nan = a.isnan();
  if (a.scalar_type() != b.scalar_type() || !nan.equal(b.isnan())) return false;
  const at::Tensor number = nan.logical_not();
  return a.view(at::kShort).masked_select(number).equal(b.view(at::kShort).masked_select(number));
}

// Values where rounding to bfloat16 is decided: ties to even both ways,
// just past a tie, the largest float (rounds to infinity), infinities, NaNs
// (a signalling one too), zeros of both signs and subnormals.
std::vector<float> HardValues() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f,
          -0.0f,
          1.0f,
          -2.5f,
          FromBits(0x3F808000),  // tie, even below: rounds down
          FromBits(0x3F818000),  // tie, odd below: rounds up
          FromBits(0x3F808001),  // just past a tie: rounds up
          FromBits(0x3F807FFF),  // just short of it: rounds down
          std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(),
          inf,
          -inf,
          std::numeric_limits<float>::quiet_NaN(),
          FromBits(0x7F800001),  // a signalling NaN
          FromBits(0xFFC12345),  // a negative NaN with a payload
          std::numeric_limits<float>::denorm_min(),
          FromBits(0x00018000),
          -std::numeric_limits<float>::min()};
}

TEST(Bf16RowsTest, RoundingIsLibTorchsBitForBit) {
  const std::vector<float> hard = HardValues();
  at::manual_seed(3);
  // Every length from 1 to 40 covers the vector loop and each tail length.
  for (int64_t n = 1; n <= 40; ++n) {
    at::Tensor x = at::randn({n}) * 100;
    for (int64_t i = 0; i < n; ++i) x[i] = hard[(i * 7 + n) % hard.size()];
    EXPECT_TRUE(SameBits(RoundToBf16(x), x.to(at::kBFloat16))) << "length " << n;
  }
  const at::Tensor random = at::randn({37, 53}) * 1e3;
  EXPECT_TRUE(RoundToBf16(random).equal(random.to(at::kBFloat16)));
  const at::Tensor strided = random.t();  // not contiguous: rounded in its own order
  const at::Tensor rounded = RoundToBf16(strided);
  EXPECT_TRUE(rounded.is_contiguous());
  EXPECT_TRUE(SameBits(rounded, strided.to(at::kBFloat16)));
}

TEST(Bf16RowsTest, WideningAddsTheBiasAsLibTorchDoes) {
  at::manual_seed(5);
  for (int64_t columns : {1, 7, 8, 9, 96, 101}) {
    const at::Tensor y = (at::randn({13, columns}) * 50).to(at::kBFloat16);
    const at::Tensor bias = at::randn({columns});
    EXPECT_TRUE(WidenPlusBias(y, bias).equal(y.to(at::kFloat) + bias)) << columns;
    EXPECT_TRUE(WidenPlusBias(y, at::Tensor()).equal(y.to(at::kFloat))) << columns;
  }
}

TEST(Bf16RowsTest, WrongInputsAreRefused) {
  const at::Tensor y = at::zeros({4, 3}, at::kBFloat16);
  EXPECT_THROW(RoundToBf16(at::zeros({4}, at::kDouble)), std::invalid_argument);
  EXPECT_THROW(WidenPlusBias(y.to(at::kFloat), at::Tensor()), std::invalid_argument);
  EXPECT_THROW(WidenPlusBias(y.view({12}), at::Tensor()), std::invalid_argument);
  EXPECT_THROW(WidenPlusBias(y, at::zeros({4})), std::invalid_argument);
  EXPECT_THROW(WidenPlusBias(y, at::zeros({3}, at::kDouble)), std::invalid_argument);
}

}  // namespace
}  // namespace dfmpc::worldmodel
