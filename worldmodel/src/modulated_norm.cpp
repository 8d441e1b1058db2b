#include "modulated_norm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <cmath>

#include "dfmpc/worldmodel/aten_kernels.h"
#include "simd.h"

namespace dfmpc::worldmodel {
namespace {

using simd::Floats8;
using simd::kLanes;
using simd::Load;

DFMPC_INLINE float Sum(const Floats8& v) {
  float total = 0.0f;
  for (int64_t i = 0; i < kLanes; ++i) total += v[i];
  return total;
}

// One row of `width`: out = (x - mean) / sqrt(variance + eps) * scale + shift.
DFMPC_SIMD_CLONES void NormRow(const float* x, const float* shift, const float* scale,
                               int64_t width, float eps, float* out) {
  const int64_t vectors = width / kLanes * kLanes;
  Floats8 sum = {};
  float tail = 0.0f;
  for (int64_t i = 0; i < vectors; i += kLanes) sum += Load(x + i);
  for (int64_t i = vectors; i < width; ++i) tail += x[i];
  const float mean = (Sum(sum) + tail) / static_cast<float>(width);
  Floats8 squares = {};
  tail = 0.0f;
  for (int64_t i = 0; i < vectors; i += kLanes) {
    const Floats8 centred = Load(x + i) - mean;
    squares += centred * centred;
  }
  for (int64_t i = vectors; i < width; ++i) tail += (x[i] - mean) * (x[i] - mean);
  const float inverse = 1.0f / std::sqrt((Sum(squares) + tail) / static_cast<float>(width) + eps);
  for (int64_t i = 0; i < vectors; i += kLanes) {
    simd::At(out + i) = (Load(x + i) - mean) * inverse * Load(scale + i) + Load(shift + i);
  }
  for (int64_t i = vectors; i < width; ++i) out[i] = (x[i] - mean) * inverse * scale[i] + shift[i];
}

bool Servable(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  if (AtenKernels::on() || x.dim() != 3) return false;
  const bool grad = c10::GradMode::is_enabled();
  for (const at::Tensor* t : {&x, &shift, &scale}) {
    if (!t->is_cpu() || t->scalar_type() != at::kFloat || (grad && t->requires_grad()) ||
        t->dim() != 3 || t->stride(2) != 1) {
      return false;
    }
  }
  for (const at::Tensor* t : {&shift, &scale}) {
    if ((t->size(0) != 1 && t->size(0) != x.size(0)) || t->size(1) != x.size(1) ||
        t->size(2) != x.size(2)) {
      return false;
    }
  }
  return true;
}

}  // namespace

at::Tensor ModulatedNorm(torch::nn::LayerNorm& norm, const at::Tensor& x, const at::Tensor& shift,
                         const at::Tensor& scale) {
  if (!Servable(x, shift, scale)) return at::addcmul(shift, norm(x), scale);
  const at::Tensor in = x.contiguous();
  at::Tensor out = at::empty(in.sizes(), in.options());
  const int64_t window = in.size(1), width = in.size(2);
  const float eps = static_cast<float>(norm->options.eps());
  const float* x_data = in.data_ptr<float>();
  const float* shift_data = shift.data_ptr<float>();
  const float* scale_data = scale.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  // A modulation of batch 1 serves every batch entry.
  const int64_t shift_batch = shift.size(0) == 1 ? 0 : shift.stride(0);
  const int64_t scale_batch = scale.size(0) == 1 ? 0 : scale.stride(0);
  const int64_t grain = std::max<int64_t>(1, at::internal::GRAIN_SIZE / width);
  at::parallel_for(0, in.size(0) * window, grain, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / window, t = row % window;
      NormRow(x_data + row * width, shift_data + b * shift_batch + t * shift.stride(1),
              scale_data + b * scale_batch + t * scale.stride(1), width, eps,
              out_data + row * width);
    }
  });
  return out;
}

}  // namespace dfmpc::worldmodel
