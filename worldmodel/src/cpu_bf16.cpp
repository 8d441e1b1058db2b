#include "dfmpc/worldmodel/cpu_bf16.h"

namespace dfmpc::worldmodel {
namespace {

thread_local bool bf16_products = false;

}  // namespace

CpuBf16Products::CpuBf16Products(bool on) : previous_(bf16_products) {
  if (on) bf16_products = true;
}

CpuBf16Products::~CpuBf16Products() { bf16_products = previous_; }

bool CpuBf16Products::Active() { return bf16_products; }

bool CpuHasBf16DotProduct() {
#if defined(__x86_64__) && defined(__GNUC__)
  return __builtin_cpu_supports("avx512bf16");
#else
  return false;
#endif
}

}  // namespace dfmpc::worldmodel
