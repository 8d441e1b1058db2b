#include "training_heap.h"

#include <cstdlib>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace dfmpc::worldmodel {

void RetainHeapForTraining() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("MALLOC_TOP_PAD_") != nullptr ||
        std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) {
      return;
    }
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kTrainingMmapThreshold));
    mallopt(M_TOP_PAD, static_cast<int>(kTrainingHeapPad));
  });
#endif
}

}  // namespace dfmpc::worldmodel
