// Configure-time check (worldmodel/CMakeLists.txt): LibTorch's Gloo process
// group compiles against the Gloo headers found.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

int GlooCheck() { return c10d::ProcessGroupGloo::Options::create() ? 0 : 1; }
