#include "arrays.h"

#include <algorithm>
#include <string>

namespace py = pybind11;

namespace dfmpc::python {
namespace {

std::string ShapeText(const py::array& array) {
  std::string text = "(";
  for (py::ssize_t d = 0; d < array.ndim(); ++d) {
    text += std::to_string(array.shape(d)) + (array.ndim() == 1 || d + 1 < array.ndim() ? "," : "");
  }
  return text + ")";
}

}  // namespace

Eigen::VectorXd ToVector(const py::handle& values, Eigen::Index size, const char* what) {
  const std::string expected = std::string(what) + " must be a float array of shape (" +
                               std::to_string(size) + ",)";
  py::array array;
  try {
    array = py::array::ensure(values);
  } catch (const py::error_already_set&) {
  }
  if (!array) throw py::value_error(expected + ", got " + std::string(py::str(py::type::of(values))));
  const char kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::value_error(expected + ", got dtype " + std::string(py::str(array.dtype())));
  }
  if (array.ndim() != 1 || array.shape(0) != size) {
    throw py::value_error(expected + ", got shape " + ShapeText(array));
  }
  const auto doubles = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(array);
  Eigen::VectorXd out(size);
  std::copy(doubles.data(), doubles.data() + size, out.data());
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
