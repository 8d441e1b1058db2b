// Python progress callbacks called from a C++ loop that runs without the
// GIL (collection, training).
#ifndef DFMPC_PYTHON_SRC_PROGRESS_H_
#define DFMPC_PYTHON_SRC_PROGRESS_H_

#include <pybind11/pybind11.h>

#include <utility>

namespace dfmpc::python {

// Takes the GIL and turns a pending Ctrl-C into an exception, which stops
// the loop like any Python call.
inline void StopOnInterrupt() {
  pybind11::gil_scoped_acquire acquire;
  if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
}

// StopOnInterrupt, then calls `progress` (with the GIL) unless it is None;
// an exception it raises propagates as itself.
template <typename... Args>
void ReportProgress(const pybind11::object& progress, Args&&... args) {
  pybind11::gil_scoped_acquire acquire;
  StopOnInterrupt();  // acquiring again while holding the GIL is a no-op
  if (!progress.is_none()) progress(std::forward<Args>(args)...);
}

}  // namespace dfmpc::python

#endif  // DFMPC_PYTHON_SRC_PROGRESS_H_
