// The parts of the `dfmpc` Python module, each added by its own file.
#ifndef DFMPC_PYTHON_SRC_BINDINGS_H_
#define DFMPC_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace dfmpc::python {

void BindData(pybind11::module_& module);      // data_bindings.cpp
void BindEnvs(pybind11::module_& module);      // env_bindings.cpp
void BindPlanner(pybind11::module_& module);   // planner_bindings.cpp
void BindRollout(pybind11::module_& module);   // rollout_bindings.cpp
void BindTraining(pybind11::module_& module);  // training_bindings.cpp

}  // namespace dfmpc::python

#endif  // DFMPC_PYTHON_SRC_BINDINGS_H_
