// Numpy arrays in and out of the bindings: what Python hands the library is
// checked here, so a wrong shape or type is a ValueError naming what was
// expected, never a crash or a silent conversion.
#ifndef DFMPC_PYTHON_SRC_ARRAYS_H_
#define DFMPC_PYTHON_SRC_ARRAYS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace dfmpc::python {

// A 1-d array of `size` real numbers (any float or integer dtype, or a
// sequence numpy reads as one) as a vector of doubles; `what` names it in
// the error. Values are not checked here: the library refuses NaN itself.
Eigen::VectorXd ToVector(const pybind11::handle& values, Eigen::Index size, const char* what);

// A 2-d array of real numbers with `cols` columns and `rows` rows (any
// number for rows < 0) as a matrix of doubles; `what` names it in the error.
Eigen::MatrixXd ToMatrix(const pybind11::handle& values, Eigen::Index rows, Eigen::Index cols,
                         const char* what);

// Copies into a new float64 numpy array: [n] and [rows, cols].
pybind11::array_t<double> ToNumpy(const Eigen::VectorXd& vector);
pybind11::array_t<double> ToNumpy(const Eigen::MatrixXd& matrix);

// Height x width RGB bytes, rows top to bottom, as a [height, width, 3]
// uint8 array.
pybind11::array_t<std::uint8_t> ImageToNumpy(const std::vector<std::uint8_t>& rgb, int width,
                                             int height);

}  // namespace dfmpc::python

#endif  // DFMPC_PYTHON_SRC_ARRAYS_H_
