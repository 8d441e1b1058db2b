// An OpenGL context without any window or display: EGL on Mesa's surfaceless
// platform, falling back to the default display with a 1x1 pbuffer.
#ifndef DFMPC_ENVS_SRC_EGL_CONTEXT_H_
#define DFMPC_ENVS_SRC_EGL_CONTEXT_H_

namespace dfmpc::envs {

class EglContext {
 public:
  // Throws std::runtime_error, saying what failed, when no EGL display or
  // desktop-OpenGL context can be created.
  EglContext();
  ~EglContext();
  EglContext(const EglContext&) = delete;
  EglContext& operator=(const EglContext&) = delete;

  // Makes this context current on the calling thread.
  void MakeCurrent();

 private:
  void* display_ = nullptr;  // EGLDisplay
  void* context_ = nullptr;  // EGLContext
  void* surface_ = nullptr;  // EGLSurface (pbuffer fallback only)
};

}  // namespace dfmpc::envs

#endif  // DFMPC_ENVS_SRC_EGL_CONTEXT_H_
