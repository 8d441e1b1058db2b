// The compiled half of the `dfmpc` Python package (python/dfmpc/__init__.py
// re-exports it). The library's std::invalid_argument reaches Python as
// ValueError and its other exceptions as RuntimeError, with the same
// message (pybind11's standard translation).
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_dfmpc, module) {
  module.doc() = "dfmpc: model-predictive control with a diffusion-forcing world model";
  dfmpc::python::BindData(module);
  dfmpc::python::BindEnvs(module);
  dfmpc::python::BindPlanner(module);
  dfmpc::python::BindRollout(module);
  dfmpc::python::BindTraining(module);
}
