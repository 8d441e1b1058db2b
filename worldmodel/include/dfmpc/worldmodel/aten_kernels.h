// A thread-local switch back to ATen's form of the kernels the world model
// fuses for CPU calls of inference size: rotary embeddings in elementwise
// operations, attention in batched matrix products, norms and their
// modulation as two operators, and ATen's conversions around bfloat16
// products (worldmodel/src/fused_rotary.h, fused_attention.h,
// modulated_norm.h, bf16_rows.h); so that a benchmark compares both forms in
// one run (`bench mpc --aten-kernels`). Results agree to float rounding.
#ifndef DFMPC_WORLDMODEL_ATEN_KERNELS_H_
#define DFMPC_WORLDMODEL_ATEN_KERNELS_H_

namespace dfmpc::worldmodel {

class AtenKernels {
 public:
  // While it lives, this thread's calls run in ATen's form when `on`; the
  // destructor restores the choice it found.
  explicit AtenKernels(bool on);
  ~AtenKernels();
  AtenKernels(const AtenKernels&) = delete;
  AtenKernels& operator=(const AtenKernels&) = delete;

  // Whether this thread's calls run in ATen's form now.
  static bool on();

 private:
  bool previous_;
};

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_ATEN_KERNELS_H_
