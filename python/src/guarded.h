// One C++ object that Python threads take turns at. The bindings release
// the GIL around model calls, so without a lock of its own two Python
// threads could reach an object that is not thread-safe (a Planner, an
// Env) at once.
#ifndef DFMPC_PYTHON_SRC_GUARDED_H_
#define DFMPC_PYTHON_SRC_GUARDED_H_

#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace dfmpc::python {

template <typename T>
class Guarded {
 public:
  // `taken` is the ValueError's message once Take() has moved it out.
  Guarded(std::unique_ptr<T> object, std::string taken)
      : object_(std::move(object)), taken_(std::move(taken)) {}

  // `call(object)` with the GIL released, for model calls: other Python
  // threads run meanwhile, and calls on this object wait their turn. The
  // call must not take the GIL.
  template <typename Call>
  auto Released(Call&& call) {
    pybind11::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    return call(Get());
  }

  // `call(object)` holding the GIL, for quick reads and checks. (It waits for
  // a Released call in progress, which finishes without the GIL.)
  template <typename Call>
  auto Held(Call&& call) {
    std::lock_guard<std::mutex> lock(mutex_);
    return call(Get());
  }

  // Destroys the object; later calls raise. Idempotent.
  void Drop() {
    std::lock_guard<std::mutex> lock(mutex_);
    object_.reset();
  }

  // Moves the object out (to an owner of its own); later calls raise.
  std::unique_ptr<T> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    Get();
    return std::move(object_);
  }

 private:
  T& Get() {
    if (!object_) throw pybind11::value_error(taken_);
    return *object_;
  }

  std::mutex mutex_;
  std::unique_ptr<T> object_;
  std::string taken_;
};

}  // namespace dfmpc::python

#endif  // DFMPC_PYTHON_SRC_GUARDED_H_
