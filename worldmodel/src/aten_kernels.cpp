#include "dfmpc/worldmodel/aten_kernels.h"

namespace dfmpc::worldmodel {
namespace {

thread_local bool aten_kernels = false;

}  // namespace

AtenKernels::AtenKernels(bool on) : previous_(aten_kernels) { aten_kernels = on; }

AtenKernels::~AtenKernels() { aten_kernels = previous_; }

bool AtenKernels::on() { return aten_kernels; }

}  // namespace dfmpc::worldmodel
