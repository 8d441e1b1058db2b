#include "arrays.h"

#include <algorithm>
#include <string>
#include <vector>

namespace py = pybind11;

namespace dfmpc::python {
namespace {

// "(3,)", "(n,5)": numpy's way of writing a shape, with n for any size.
std::string ShapeText(const std::vector<py::ssize_t>& dims) {
  std::string text = "(";
  for (size_t d = 0; d < dims.size(); ++d) {
    text += (dims[d] < 0 ? std::string("n") : std::to_string(dims[d])) +
            (dims.size() == 1 || d + 1 < dims.size() ? "," : "");
  }
  return text + ")";
}

// `values` as a numpy array of real numbers with the shape `expected`
// (-1: any size) as C-ordered doubles; a ValueError naming `what` and the
// expected shape otherwise.
py::array_t<double, py::array::c_style | py::array::forcecast> RealArray(
    const py::handle& values, const std::vector<py::ssize_t>& expected, const char* what) {
  const std::string wanted =
      std::string(what) + " must be a float array of shape " + ShapeText(expected);
  py::array array;
  try {
    array = py::array::ensure(values);
  } catch (const py::error_already_set&) {
  }
  if (!array) throw py::value_error(wanted + ", got " + std::string(py::str(py::type::of(values))));
  const char kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::value_error(wanted + ", got dtype " + std::string(py::str(array.dtype())));
  }
  bool matches = array.ndim() == static_cast<py::ssize_t>(expected.size());
  for (size_t d = 0; matches && d < expected.size(); ++d) {
    matches = expected[d] < 0 || array.shape(d) == expected[d];
  }
  if (!matches) {
    throw py::value_error(
        wanted + ", got shape " +
        ShapeText(std::vector<py::ssize_t>(array.shape(), array.shape() + array.ndim())));
  }
  return py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
}

}  // namespace

Eigen::VectorXd ToVector(const py::handle& values, Eigen::Index size, const char* what) {
  const auto doubles = RealArray(values, {size}, what);
  Eigen::VectorXd out(size);
  std::copy(doubles.data(), doubles.data() + size, out.data());
  return out;
}

Eigen::MatrixXd ToMatrix(const py::handle& values, Eigen::Index rows, Eigen::Index cols,
                         const char* what) {
  const auto doubles = RealArray(values, {rows, cols}, what);
  const Eigen::Index n = doubles.shape(0);
  Eigen::MatrixXd out(n, cols);
  auto view = doubles.unchecked<2>();
  for (Eigen::Index r = 0; r < n; ++r) {
    for (Eigen::Index c = 0; c < cols; ++c) out(r, c) = view(r, c);
  }
  return out;
}

py::array_t<double> ToNumpy(const Eigen::VectorXd& vector) {
  py::array_t<double> out(vector.size());
  std::copy(vector.data(), vector.data() + vector.size(), out.mutable_data());
  return out;
}

py::array_t<double> ToNumpy(const Eigen::MatrixXd& matrix) {
  py::array_t<double> out({matrix.rows(), matrix.cols()});
  auto view = out.mutable_unchecked<2>();
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) view(r, c) = matrix(r, c);
  }
  return out;
}

py::array_t<std::uint8_t> ImageToNumpy(const std::vector<std::uint8_t>& rgb, int width,
                                       int height) {
  py::array_t<std::uint8_t> out({height, width, 3});
  std::copy(rgb.begin(), rgb.end(), out.mutable_data());
  return out;
}

}  // namespace dfmpc::python
