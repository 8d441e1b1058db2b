// A thread-local switch back to attention in batched matrix products for
// the CPU calls the fused kernel serves (worldmodel/src/fused_attention.h),
// so that a benchmark compares the two in one run (`bench mpc
// --batched-attention`). Results agree to float rounding.
#ifndef DFMPC_WORLDMODEL_BATCHED_ATTENTION_H_
#define DFMPC_WORLDMODEL_BATCHED_ATTENTION_H_

namespace dfmpc::worldmodel {

class BatchedAttention {
 public:
  // While it lives, this thread's attention runs batched when `on`; the
  // destructor restores the choice it found.
  explicit BatchedAttention(bool on);
  ~BatchedAttention();
  BatchedAttention(const BatchedAttention&) = delete;
  BatchedAttention& operator=(const BatchedAttention&) = delete;

 private:
  bool previous_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_BATCHED_ATTENTION_H_
