// Offscreen rendering of a MuJoCo model to RGB bytes, in its own EGL context.
#ifndef DFMPC_ENVS_SRC_RENDERER_H_
#define DFMPC_ENVS_SRC_RENDERER_H_

#include <mujoco/mujoco.h>

#include <cstdint>
#include <string>
#include <vector>

#include "egl_context.h"

namespace dfmpc::envs {

class Renderer {
 public:
  // Uses the named fixed camera (MuJoCo's free camera when the name is empty). Shadows and
  // reflections are off, and multisampling follows the model's
  // visual/quality/offsamples (0 in our tasks): about 30x faster at 64x64.
  Renderer(const mjModel* model, const std::string& camera_name);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Renders `data` (with up-to-date poses) to height * width * 3 bytes, rows
  // top to bottom. Throws std::invalid_argument for sizes outside
  // 1 .. the model's offscreen buffer (visual/global/offwidth, offheight).
  std::vector<std::uint8_t> Render(const mjModel* model, mjData* data, int width, int height);

 private:
  EglContext egl_;
  mjvScene scene_;
  mjvCamera camera_;
  mjvOption option_;
  mjrContext context_;
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_RENDERER_H_
