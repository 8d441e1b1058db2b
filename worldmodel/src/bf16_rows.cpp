#include "bf16_rows.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "simd.h"

namespace dfmpc::worldmodel {
namespace {

using simd::Floats8;
using simd::kLanes;
using simd::Load;
using Bits8 = uint32_t __attribute__((vector_size(32)));
using Mask8 = int32_t __attribute__((vector_size(32)));
using Halves8 = uint16_t __attribute__((vector_size(16)));

// Elements per parallel task: smaller calls (a warm step's) stay on the
// calling thread.
constexpr int64_t kGrain = 1 << 15;

DFMPC_INLINE void RoundEight(const Floats8& value, uint16_t* out) {
  Bits8 bits;
  std::memcpy(&bits, &value, sizeof bits);
  const Bits8 rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  const Bits8 nan = reinterpret_cast<const Bits8&>(static_cast<const Mask8&>(value != value));
  const Halves8 halves = __builtin_convertvector((rounded & ~nan) | (nan & 0x7FC0u), Halves8);
  std::memcpy(out, &halves, sizeof halves);
}

DFMPC_INLINE void WidenEight(const uint16_t* in, Floats8* value) {
  Halves8 halves;
  std::memcpy(&halves, in, sizeof halves);
  const Bits8 bits = __builtin_convertvector(halves, Bits8) << 16;
  std::memcpy(value, &bits, sizeof *value);
}

float Widened(uint16_t bits) {
  c10::BFloat16 half;
  half.x = bits;
  return static_cast<float>(half);
}

DFMPC_SIMD_CLONES void Round(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) RoundEight(Load(in + i), out + i);
  for (; i < n; ++i) out[i] = c10::BFloat16(in[i]).x;
}

DFMPC_SIMD_CLONES void Widen(const uint16_t* in, const float* bias, int64_t rows, int64_t columns,
                             float* out) {
  for (int64_t r = 0; r < rows; ++r, in += columns, out += columns) {
    int64_t j = 0;
    for (; j + kLanes <= columns; j += kLanes) {
      Floats8 value;
      WidenEight(in + j, &value);
      if (bias != nullptr) value += Load(bias + j);
      simd::At(out + j) = value;
    }
    for (; j < columns; ++j) out[j] = bias != nullptr ? Widened(in[j]) + bias[j] : Widened(in[j]);
  }
}

void Require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

at::Tensor RoundToBf16(const at::Tensor& x) {
  Require(x.is_cpu() && x.scalar_type() == at::kFloat, "RoundToBf16: x must be a CPU float tensor");
  const at::Tensor in = x.contiguous();
  at::Tensor out = at::empty(in.sizes(), in.options().dtype(at::kBFloat16));
  const float* source = in.data_ptr<float>();
  auto* target = reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>());
  at::parallel_for(0, in.numel(), kGrain, [&](int64_t begin, int64_t end) {
    Round(source + begin, target + begin, end - begin);
  });
  return out;
}

at::Tensor WidenPlusBias(const at::Tensor& y, const at::Tensor& bias) {
  Require(y.is_cpu() && y.scalar_type() == at::kBFloat16 && y.dim() == 2,
          "WidenPlusBias: y must be a CPU bfloat16 matrix");
  const int64_t columns = y.size(1);
  Require(!bias.defined() || (bias.is_cpu() && bias.scalar_type() == at::kFloat &&
                              bias.dim() == 1 && bias.size(0) == columns),
          "WidenPlusBias: bias must be a CPU float vector of y's columns");
  const at::Tensor in = y.contiguous();
  const at::Tensor add = bias.defined() ? bias.contiguous() : at::Tensor();
  at::Tensor out = at::empty(in.sizes(), in.options().dtype(at::kFloat));
  const auto* source = reinterpret_cast<const uint16_t*>(in.data_ptr<at::BFloat16>());
  const float* bias_data = add.defined() ? add.data_ptr<float>() : nullptr;
  float* target = out.data_ptr<float>();
  const int64_t grain_rows = std::max<int64_t>(1, kGrain / std::max<int64_t>(columns, 1));
  at::parallel_for(0, in.size(0), grain_rows, [&](int64_t begin, int64_t end) {
    Widen(source + begin * columns, bias_data, end - begin, columns, target + begin * columns);
  });
  return out;
}

}  // namespace dfmpc::worldmodel
