#include "egl_context.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "dfmpc/envs/env.h"

namespace dfmpc::envs {
namespace {

std::string EglError(const std::string& what) {
  char code[16];
  std::snprintf(code, sizeof(code), "0x%04X", static_cast<unsigned>(eglGetError()));
  return "EGL: " + what + " failed (error " + code +
         "); headless rendering needs Mesa's EGL (libegl-mesa0, libgl1-mesa-dri) or a GPU driver";
}

bool HasExtension(EGLDisplay display, const char* name) {
  const char* extensions = eglQueryString(display, EGL_EXTENSIONS);
  return extensions != nullptr && std::strstr(extensions, name) != nullptr;
}

// Mesa's surfaceless platform needs no display server; returns
// EGL_NO_DISPLAY where it is not available.
EGLDisplay OpenSurfacelessDisplay() {
  if (!HasExtension(EGL_NO_DISPLAY, "EGL_MESA_platform_surfaceless")) return EGL_NO_DISPLAY;
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
      eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (get_platform_display == nullptr) return EGL_NO_DISPLAY;
  EGLDisplay display =
      get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  if (display != EGL_NO_DISPLAY && eglInitialize(display, nullptr, nullptr) == EGL_TRUE) {
    return display;
  }
  return EGL_NO_DISPLAY;
}

}  // namespace

EglContext::EglContext() {
  EGLDisplay display = OpenSurfacelessDisplay();
  const bool surfaceless = display != EGL_NO_DISPLAY;
  if (!surfaceless) {
    display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    if (display == EGL_NO_DISPLAY || eglInitialize(display, nullptr, nullptr) != EGL_TRUE) {
      throw NoRenderDevice(EglError("opening a display (no surfaceless platform either)"));
    }
  }
  display_ = display;
  const EGLint config_attributes[] = {EGL_SURFACE_TYPE,
                                      surfaceless ? 0 : EGL_PBUFFER_BIT,
                                      EGL_RED_SIZE,
                                      8,
                                      EGL_GREEN_SIZE,
                                      8,
                                      EGL_BLUE_SIZE,
                                      8,
                                      EGL_DEPTH_SIZE,
                                      24,
                                      EGL_RENDERABLE_TYPE,
                                      EGL_OPENGL_BIT,
                                      EGL_NONE};
  EGLConfig config;
  EGLint count = 0;
  if (eglChooseConfig(display, config_attributes, &config, 1, &count) != EGL_TRUE || count < 1) {
    throw std::runtime_error(EglError("choosing an RGB/depth OpenGL config"));
  }
  if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) {
    throw std::runtime_error(EglError("binding desktop OpenGL"));
  }
  EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, nullptr);
  if (context == EGL_NO_CONTEXT) {
    throw std::runtime_error(EglError("creating an OpenGL context"));
  }
  context_ = context;
  if (!surfaceless) {
    const EGLint pbuffer_attributes[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    surface_ = eglCreatePbufferSurface(display, config, pbuffer_attributes);
    if (surface_ == EGL_NO_SURFACE) {
      eglDestroyContext(display, context);
      throw std::runtime_error(EglError("creating a pbuffer surface"));
    }
  }
  MakeCurrent();
}

EglContext::~EglContext() {
  eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (surface_ != nullptr) eglDestroySurface(display_, surface_);
  eglDestroyContext(display_, context_);
  // The display is shared by every context of the process: it stays open.
}

void EglContext::MakeCurrent() {
  if (eglGetCurrentContext() == context_) return;
  EGLSurface surface = surface_ != nullptr ? surface_ : EGL_NO_SURFACE;
  if (eglMakeCurrent(display_, surface, surface, context_) != EGL_TRUE) {
    throw std::runtime_error(EglError("making the OpenGL context current"));
  }
}

}  // namespace dfmpc::envs
