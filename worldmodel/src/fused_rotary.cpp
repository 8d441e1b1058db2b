#include "fused_rotary.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <vector>

#include "dfmpc/worldmodel/aten_kernels.h"

namespace dfmpc::worldmodel {
namespace {

// Walks the rows (all but the last dimension) of x and of its two tables,
// broadcast to x's shape, in x's logical order, keeping each one's offset.
class RowWalk {
 public:
  RowWalk(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, int64_t first_row)
      : sizes_(x.sizes().begin(), x.sizes().end() - 1), index_(sizes_.size(), 0) {
    const at::Tensor* tensors[] = {&x, &cos, &sin};
    for (int t = 0; t < 3; ++t) {
      strides_[t].assign(tensors[t]->strides().begin(), tensors[t]->strides().end() - 1);
    }
    for (int64_t d = static_cast<int64_t>(sizes_.size()) - 1, rest = first_row; d >= 0; --d) {
      index_[d] = rest % sizes_[d];
      rest /= sizes_[d];
      for (int t = 0; t < 3; ++t) offsets_[t] += index_[d] * strides_[t][d];
    }
  }

  int64_t offset(int tensor) const { return offsets_[tensor]; }

  void Next() {
    for (int64_t d = static_cast<int64_t>(sizes_.size()) - 1; d >= 0; --d) {
      for (int t = 0; t < 3; ++t) offsets_[t] += strides_[t][d];
      if (++index_[d] < sizes_[d]) return;
      for (int t = 0; t < 3; ++t) offsets_[t] -= strides_[t][d] * sizes_[d];
      index_[d] = 0;
    }
  }

 private:
  std::vector<int64_t> sizes_, index_;
  std::vector<int64_t> strides_[3];
  int64_t offsets_[3] = {0, 0, 0};
};

// A CPU float tensor that autograd does not track, its last dimension
// contiguous.
bool Servable(const at::Tensor& t, bool grad) {
  return t.is_cpu() && t.scalar_type() == at::kFloat && !(grad && t.requires_grad()) &&
         t.stride(-1) == 1;
}

}  // namespace

bool FusedRotaryApplies(const at::Tensor& x, const RotaryAngles& angles) {
  if (AtenKernels::on() || x.dim() < 2 || x.numel() == 0 || x.size(-1) % 2 != 0) {
    return false;
  }
  const bool grad = c10::GradMode::is_enabled();
  for (const at::Tensor* t : {&x, &angles.cos, &angles.sin}) {
    if (t->dim() < 1 || !Servable(*t, grad)) return false;
    if (!at::is_expandable_to(t->sizes(), x.sizes())) return false;
  }
  return true;
}

at::Tensor FusedRotary(const at::Tensor& x, const RotaryAngles& angles) {
  at::Tensor out = at::empty(x.sizes(), x.options());
  const at::Tensor cos = angles.cos.expand(x.sizes()), sin = angles.sin.expand(x.sizes());
  const int64_t head_dim = x.size(-1), half = head_dim / 2, rows = x.numel() / head_dim;
  const float* x_data = x.data_ptr<float>();
  const float* cos_data = cos.data_ptr<float>();
  const float* sin_data = sin.data_ptr<float>();
  float* out_data = out.data_ptr<float>();
  const int64_t grain = std::max<int64_t>(1, at::internal::GRAIN_SIZE / head_dim);
  at::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
    RowWalk walk(x, cos, sin, begin);
    for (int64_t row = begin; row < end; ++row, walk.Next()) {
      const float* in = x_data + walk.offset(0);
      const float* c = cos_data + walk.offset(1);
      const float* s = sin_data + walk.offset(2);
      float* o = out_data + row * head_dim;
      // rotate_half swaps the halves; the sign lives in the sin table.
      for (int64_t i = 0; i < half; ++i) o[i] = in[i] * c[i] + in[i + half] * s[i];
      for (int64_t i = half; i < head_dim; ++i) o[i] = in[i] * c[i] + in[i - half] * s[i];
    }
  });
  return out;
}

}  // namespace dfmpc::worldmodel
