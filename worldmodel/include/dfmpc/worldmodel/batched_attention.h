// A thread-local switch back to ATen's form of attention for the CPU calls
// the fused kernels serve (worldmodel/src/fused_attention.h and
// fused_rotary.h): rotary embeddings in elementwise operations, attention in
// batched matrix products; so that a benchmark compares the two in one run
// (`bench mpc --batched-attention`). Results agree to float rounding.
#ifndef DFMPC_WORLDMODEL_BATCHED_ATTENTION_H_
#define DFMPC_WORLDMODEL_BATCHED_ATTENTION_H_

namespace dfmpc::worldmodel {

class BatchedAttention {
 public:
  // While it lives, this thread's attention runs in ATen's form when `on`;
  // the destructor restores the choice it found.
  explicit BatchedAttention(bool on);
  ~BatchedAttention();
  BatchedAttention(const BatchedAttention&) = delete;
  BatchedAttention& operator=(const BatchedAttention&) = delete;

  // Whether this thread's attention runs in ATen's form now.
  static bool on();

 private:
  bool previous_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_BATCHED_ATTENTION_H_
