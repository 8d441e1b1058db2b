// A check that a thread's DfTransformer calls run between their transformer
// blocks, so that a call can stop part-way: the planner's deadline and abort
// callback (planner.h). The check stops a call by throwing; a call is pure
// until its caller commits the keys and values it returns, so a stopped
// call leaves the cache as it was.
//
// While a BetweenBlocks object lives on a thread, every DfTransformer call
// that thread runs eagerly calls its check before each block (the first
// check marks where the blocks begin, for a caller that times them).
// A call replayed as a CUDA graph runs whole (graphs are captured with no
// check), and on a GPU the check sees the host's progress in queueing the
// blocks, not the device's in running them.
#ifndef DFMPC_WORLDMODEL_BETWEEN_BLOCKS_H_
#define DFMPC_WORLDMODEL_BETWEEN_BLOCKS_H_

#include <functional>

namespace dfmpc::worldmodel {

class BetweenBlocks {
 public:
  // Installs `check` (null: none) for this thread until the destructor,
  // which restores the check it found. `check` must outlive this object.
  explicit BetweenBlocks(const std::function<void()>* check);
  ~BetweenBlocks();
  BetweenBlocks(const BetweenBlocks&) = delete;
  BetweenBlocks& operator=(const BetweenBlocks&) = delete;

  // Runs this thread's check, if one is installed (DfTransformer's calls).
  static void Check();

 private:
  const std::function<void()>* previous_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_BETWEEN_BLOCKS_H_
