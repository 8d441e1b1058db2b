#include "renderer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dfmpc::envs {

Renderer::Renderer(const mjModel* model, const std::string& camera_name) {
  mjv_defaultScene(&scene_);
  mjv_defaultCamera(&camera_);
  mjv_defaultOption(&option_);
  mjr_defaultContext(&context_);
  mjv_makeScene(model, &scene_, 1000);
  scene_.flags[mjRND_SHADOW] = 0;
  scene_.flags[mjRND_REFLECTION] = 0;
  const int camera =
      camera_name.empty() ? -1 : mj_name2id(model, mjOBJ_CAMERA, camera_name.c_str());
  if (camera >= 0) {
    camera_.type = mjCAMERA_FIXED;
    camera_.fixedcamid = camera;
  } else {
    mjv_defaultFreeCamera(model, &camera_);
  }
  mjr_makeContext(model, &context_, mjFONTSCALE_50);
  mjr_setBuffer(mjFB_OFFSCREEN, &context_);
}

Renderer::~Renderer() {
  egl_.MakeCurrent();
  mjr_freeContext(&context_);
  mjv_freeScene(&scene_);
}

std::vector<std::uint8_t> Renderer::Render(const mjModel* model, mjData* data, int width,
                                           int height) {
  if (width < 1 || height < 1 || width > context_.offWidth || height > context_.offHeight) {
    throw std::invalid_argument("render size " + std::to_string(width) + "x" +
                                std::to_string(height) + " is outside 1x1 .. " +
                                std::to_string(context_.offWidth) + "x" +
                                std::to_string(context_.offHeight));
  }
  egl_.MakeCurrent();
  mjr_setBuffer(mjFB_OFFSCREEN, &context_);
  mjv_updateScene(model, data, &option_, nullptr, &camera_, mjCAT_ALL, &scene_);
  const mjrRect viewport = {0, 0, width, height};
  mjr_render(viewport, &scene_, &context_);
  const std::size_t row = static_cast<std::size_t>(width) * 3;
  std::vector<std::uint8_t> bottom_up(row * height);
  mjr_readPixels(bottom_up.data(), nullptr, viewport, &context_);
  std::vector<std::uint8_t> rgb(bottom_up.size());
  for (int y = 0; y < height; ++y) {
    std::copy_n(bottom_up.begin() + static_cast<std::ptrdiff_t>(row * (height - 1 - y)), row,
                rgb.begin() + static_cast<std::ptrdiff_t>(row * y));
  }
  return rgb;
}

}  // namespace dfmpc::envs
