#include "autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace dfmpc::worldmodel {
namespace {

// LibTorch 2.4 replaced the CUDA-only calls by ones that take the device.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool Enabled() { return at::autocast::is_autocast_enabled(at::kCUDA); }
void SetEnabled(bool on) { at::autocast::set_autocast_enabled(at::kCUDA, on); }
c10::ScalarType Dtype() { return at::autocast::get_autocast_dtype(at::kCUDA); }
void SetDtype(c10::ScalarType dtype) { at::autocast::set_autocast_dtype(at::kCUDA, dtype); }
#else
bool Enabled() { return at::autocast::is_enabled(); }
void SetEnabled(bool on) { at::autocast::set_enabled(on); }
c10::ScalarType Dtype() { return at::autocast::get_autocast_gpu_dtype(); }
void SetDtype(c10::ScalarType dtype) { at::autocast::set_autocast_gpu_dtype(dtype); }
#endif

}  // namespace

CudaBf16Autocast::CudaBf16Autocast(bool on) : on_(on) {
  if (!on_) return;
  was_enabled_ = Enabled();
  previous_dtype_ = Dtype();
  SetDtype(c10::ScalarType::BFloat16);
  SetEnabled(true);
  at::autocast::increment_nesting();
}

CudaBf16Autocast::~CudaBf16Autocast() {
  if (!on_) return;
  // The cast weights are cached while autocast is nested; drop them on the
  // way out, as torch.autocast does.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(was_enabled_);
  SetDtype(previous_dtype_);
}

}  // namespace dfmpc::worldmodel
