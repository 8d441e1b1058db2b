// Sets the calling thread's LibTorch intra-op thread count for a scope and
// restores it on exit, so a planner's thread option changes nothing outside
// its own calls. LibTorch's OpenMP build (Debian's, and the official ones)
// reads the count from the calling thread's OpenMP setting, which this sets
// directly: at::set_num_threads would also write the process-wide default
// that threads started meanwhile take, and clear oneDNN's cache. Inter-op
// threads are process-wide in LibTorch and are never touched.
#ifndef DFMPC_PLANNER_INTRA_OP_THREADS_H_
#define DFMPC_PLANNER_INTRA_OP_THREADS_H_

#include <ATen/Parallel.h>
#include <omp.h>

namespace dfmpc::planner {

class IntraOpThreads {
 public:
  // `threads` <= 0 leaves the setting alone.
  explicit IntraOpThreads(int threads) {
    // LibTorch sets a thread's count on its first parallel call; done
    // first here, so that it cannot overwrite ours.
    at::internal::lazy_init_num_threads();
    previous_ = omp_get_max_threads();
    if (threads > 0 && threads != previous_) {
      omp_set_num_threads(threads);
      changed_ = true;
    }
  }
  ~IntraOpThreads() {
    if (changed_) omp_set_num_threads(previous_);
  }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace dfmpc::planner

#endif  // DFMPC_PLANNER_INTRA_OP_THREADS_H_
