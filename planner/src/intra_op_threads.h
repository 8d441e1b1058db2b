// Sets LibTorch's intra-op thread count for a scope and restores the
// caller's on exit, so a planner's thread option changes nothing outside its
// own calls. In LibTorch's OpenMP build (Debian's) the count is the calling
// thread's OpenMP setting, so planners on different threads keep their own;
// inter-op threads are process-wide in LibTorch and are never touched.
#ifndef DFMPC_PLANNER_INTRA_OP_THREADS_H_
#define DFMPC_PLANNER_INTRA_OP_THREADS_H_

#include <ATen/Parallel.h>

namespace dfmpc::planner {

class IntraOpThreads {
 public:
  // `threads` <= 0 leaves the setting alone.
  explicit IntraOpThreads(int threads) : previous_(at::get_num_threads()) {
    if (threads > 0 && threads != previous_) {
      at::set_num_threads(threads);
      changed_ = true;
    }
  }
  ~IntraOpThreads() {
    if (changed_) at::set_num_threads(previous_);
  }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int previous_;
  bool changed_ = false;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_INTRA_OP_THREADS_H_
