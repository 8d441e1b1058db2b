// bf16 autocast on CUDA for the scope of one object (internal to the world
// model): LibTorch's autocast state is per thread and global to it, and its
// API changed between LibTorch 1.13 and 2.x; this hides both.
#ifndef DFMPC_WORLDMODEL_SRC_AUTOCAST_H_
#define DFMPC_WORLDMODEL_SRC_AUTOCAST_H_

#include <c10/core/ScalarType.h>

namespace dfmpc::worldmodel {

class CudaBf16Autocast {
 public:
  // Off: does nothing. On: CUDA ops that autocast covers (matrix products,
  // mostly) run in bf16 until destruction, which restores the thread's
  // previous autocast state.
  explicit CudaBf16Autocast(bool on);
  ~CudaBf16Autocast();
  CudaBf16Autocast(const CudaBf16Autocast&) = delete;
  CudaBf16Autocast& operator=(const CudaBf16Autocast&) = delete;

 private:
  bool on_;
  bool was_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Half;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_SRC_AUTOCAST_H_
