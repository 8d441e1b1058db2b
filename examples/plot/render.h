// Runs a gnuplot script that draws one PNG, atomically.
#ifndef DFMPC_EXAMPLES_PLOT_RENDER_H_
#define DFMPC_EXAMPLES_PLOT_RENDER_H_

#include <functional>
#include <string>

namespace dfmpc::plot {

// Runs gnuplot on `script_for(png)`, a script that must draw into the file
// `png`, a temporary beside `path` that is renamed to `path` once it holds a
// PNG. On any failure (directory missing or unwritable, gnuplot absent or
// failing, no PNG written) throws std::runtime_error saying why and leaves no
// new file behind.
void RenderPng(const std::string& path,
               const std::function<std::string(const std::string& png)>& script_for);

}  // namespace dfmpc::plot

#endif  // DFMPC_EXAMPLES_PLOT_RENDER_H_
