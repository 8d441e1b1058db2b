// bfloat16 matrix products on the CPU, switched on per thread (issue 28).
//
// While a CpuBf16Products object made with on = true lives on a thread, the
// DfTransformer forwards that thread runs on the CPU under InferenceMode
// multiply the transformer blocks' linear layers in bfloat16 for calls of
// more than 64 tokens (a planner's step with its candidates, a plan from
// noise): inputs and weights rounded to bfloat16, products accumulated in
// float by oneDNN, results rounded to bfloat16 and read back as float. The
// token embedding, the output layer, norms, attention and the residual
// stream stay float. Smaller calls stay float too: there bfloat16 is no
// faster (docs/experiments.md, "bfloat16 products").
//
// On a CPU with AVX512-BF16 such a product is 2.5-3x faster than float at
// 256 tokens; without those instructions it is slower than float
// (CpuHasBf16DotProduct). Approximate: each product carries bfloat16's
// relative rounding of about 2^-9. Off by default; a guided planner (no
// InferenceMode) and a CUDA model ignore it.
#ifndef DFMPC_WORLDMODEL_CPU_BF16_H_
#define DFMPC_WORLDMODEL_CPU_BF16_H_

namespace dfmpc::worldmodel {

class CpuBf16Products {
 public:
  // Off: leaves this thread's setting as it is. Either way the destructor
  // restores the setting it found.
  explicit CpuBf16Products(bool on);
  ~CpuBf16Products();
  CpuBf16Products(const CpuBf16Products&) = delete;
  CpuBf16Products& operator=(const CpuBf16Products&) = delete;

  // Whether bfloat16 products are on for this thread.
  static bool Active();

 private:
  bool previous_;
};

// Whether this CPU has the AVX512-BF16 dot-product instructions that make
// bfloat16 products faster than float ones.
bool CpuHasBf16DotProduct();

}  // namespace dfmpc::worldmodel

#endif  // DFMPC_WORLDMODEL_CPU_BF16_H_
