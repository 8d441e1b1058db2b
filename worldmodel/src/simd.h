// Vectors of eight floats for the CPU kernels of the world model (internal):
// GCC's and Clang's vector extension, so one source serves a portable build
// and an AVX2+FMA clone chosen when the process loads.
#ifndef DFMPC_WORLDMODEL_SRC_SIMD_H_
#define DFMPC_WORLDMODEL_SRC_SIMD_H_

#include <cstdint>
#include <cstring>

namespace dfmpc::worldmodel::simd {

// Eight floats in one register (two on a machine without AVX). Read and
// written through Unaligned8 references (vector types may alias their
// element type), never returned by value from a cloned function: that
// would change the ABI between the clones.
using Floats8 = float __attribute__((vector_size(32)));
using Unaligned8 = float __attribute__((vector_size(32), aligned(4)));
using Ints8 = int32_t __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;

// An AVX2+FMA clone beside the portable one, chosen when the process loads
// (by an ifunc resolver, which ThreadSanitizer's runtime is not yet ready
// to run: a TSan build keeps the portable code alone).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define DFMPC_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define DFMPC_SIMD_CLONES
#endif

#define DFMPC_INLINE inline __attribute__((always_inline))

DFMPC_INLINE const Unaligned8& Load(const float* p) {
  return *reinterpret_cast<const Unaligned8*>(p);
}

DFMPC_INLINE Unaligned8& At(float* p) { return *reinterpret_cast<Unaligned8*>(p); }

// e^x for x <= 0 into *e, Cephes' single-precision polynomial: within 2 ulp
// of the exact value; x below -87.3 gives 2^-126 instead of a smaller
// number, far below anything a softmax or an activation resolves.
DFMPC_INLINE void ExpOfNonPositive(const Floats8& value, Floats8* e) {
  const Floats8 x = value < -87.3f ? Floats8{} - 87.3f : value;
  const Floats8 t = x * 1.44269504088896341f + 0.5f;
  Floats8 n = __builtin_convertvector(__builtin_convertvector(t, Ints8), Floats8);
  n -= __builtin_convertvector(-(n > t), Floats8);  // truncation rounded a negative t up
  const Floats8 r = x - n * 0.693359375f + n * 2.12194440e-4f;
  Floats8 p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const Floats8 power = r * r * p + r + 1.0f;
  const Ints8 exponent = (__builtin_convertvector(n, Ints8) + 127) << 23;
  Floats8 scale;
  std::memcpy(&scale, &exponent, sizeof scale);
  *e = power * scale;
}

}  // namespace dfmpc::worldmodel::simd

#endif  // DFMPC_WORLDMODEL_SRC_SIMD_H_
