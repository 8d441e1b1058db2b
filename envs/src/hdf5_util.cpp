#include "hdf5_util.h"

#include <stdexcept>

namespace dfmpc::envs::hdf5 {

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    Reset();
    id_ = other.id_;
    close_ = other.close_;
    other.id_ = -1;
  }
  return *this;
}

void Handle::Reset() {
  if (id_ >= 0 && close_ != nullptr) close_(id_);
  id_ = -1;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &handler_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, handler_, data_); }

void Check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("HDF5: " + what + " failed");
}

namespace {

void WriteAttribute(hid_t object, const char* name, hid_t type, const void* value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid())
    throw std::runtime_error(std::string("HDF5: cannot create attribute ") + name);
  Check(H5Awrite(attribute.get(), type, value), std::string("writing attribute ") + name);
}

Handle OpenAttribute(hid_t object, const char* name) {
  if (H5Aexists(object, name) <= 0) {
    throw std::runtime_error(std::string("missing attribute '") + name + "'");
  }
  Handle attribute(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
  if (!attribute.valid())
    throw std::runtime_error(std::string("cannot open attribute '") + name + "'");
  return attribute;
}

template <typename T>
T ReadScalarAttribute(hid_t object, const char* name, hid_t type) {
  Handle attribute = OpenAttribute(object, name);
  T value{};
  Check(H5Aread(attribute.get(), type, &value), std::string("reading attribute ") + name);
  return value;
}

}  // namespace

void WriteStringAttribute(hid_t object, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  Check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), "sizing a string");
  Check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "padding a string");
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  WriteAttribute(object, name, type.get(), padded.data());
}

void WriteInt64Attribute(hid_t object, const char* name, long long value) {
  WriteAttribute(object, name, H5T_NATIVE_LLONG, &value);
}

void WriteDoubleAttribute(hid_t object, const char* name, double value) {
  WriteAttribute(object, name, H5T_NATIVE_DOUBLE, &value);
}

std::string ReadStringAttribute(hid_t object, const char* name) {
  Handle attribute = OpenAttribute(object, name);
  Handle type(H5Aget_type(attribute.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) {
    throw std::runtime_error(std::string("attribute '") + name + "' is not a fixed-length string");
  }
  std::string value(H5Tget_size(type.get()), '\0');
  Check(H5Aread(attribute.get(), type.get(), value.data()),
        std::string("reading attribute ") + name);
  value.resize(value.find_last_not_of('\0') + 1);
  return value;
}

std::string ReadStringAttribute(hid_t file, const char* dataset, const char* name) {
  Handle object(H5Dopen2(file, dataset, H5P_DEFAULT), H5Dclose);
  if (!object.valid()) {
    throw std::runtime_error(std::string("cannot open dataset '") + dataset + "'");
  }
  return ReadStringAttribute(object.get(), name);
}

long long ReadInt64Attribute(hid_t object, const char* name) {
  return ReadScalarAttribute<long long>(object, name, H5T_NATIVE_LLONG);
}

double ReadDoubleAttribute(hid_t object, const char* name) {
  return ReadScalarAttribute<double>(object, name, H5T_NATIVE_DOUBLE);
}

RowWriter::RowWriter(hid_t file, const char* name, hid_t type, std::vector<hsize_t> row_shape,
                     hsize_t chunk_rows, bool compress)
    : type_(type), row_shape_(std::move(row_shape)) {
  std::vector<hsize_t> dims{0}, max_dims{H5S_UNLIMITED}, chunk{chunk_rows};
  for (hsize_t d : row_shape_) {
    dims.push_back(d);
    max_dims.push_back(d);
    chunk.push_back(d);
  }
  const int rank = static_cast<int>(dims.size());
  Handle space(H5Screate_simple(rank, dims.data(), max_dims.data()), H5Sclose);
  Handle properties(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  Check(H5Pset_chunk(properties.get(), rank, chunk.data()), std::string("chunking ") + name);
  if (compress) Check(H5Pset_deflate(properties.get(), 1), std::string("compressing ") + name);
  // A checksum per chunk: a corrupt byte of data is a read error, not a value.
  Check(H5Pset_fletcher32(properties.get()), std::string("checksumming ") + name);
  dataset_ =
      Handle(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, properties.get(), H5P_DEFAULT),
             H5Dclose);
  if (!dataset_.valid())
    throw std::runtime_error(std::string("HDF5: cannot create dataset ") + name);
}

void RowWriter::Append(const void* rows, hsize_t count) {
  if (count == 0) return;
  std::vector<hsize_t> new_dims{size_ + count}, start{size_}, block{count};
  for (hsize_t d : row_shape_) {
    new_dims.push_back(d);
    start.push_back(0);
    block.push_back(d);
  }
  Check(H5Dset_extent(dataset_.get(), new_dims.data()), "growing a dataset");
  Handle file_space(H5Dget_space(dataset_.get()), H5Sclose);
  Check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, block.data(),
                            nullptr),
        "selecting rows");
  Handle memory_space(H5Screate_simple(static_cast<int>(block.size()), block.data(), nullptr),
                      H5Sclose);
  Check(H5Dwrite(dataset_.get(), type_, memory_space.get(), file_space.get(), H5P_DEFAULT, rows),
        "appending rows");
  size_ += count;
}

std::vector<hsize_t> Shape(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
    throw std::runtime_error(std::string("missing dataset '") + name + "'");
  }
  Handle dataset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) throw std::runtime_error(std::string("cannot open dataset '") + name + "'");
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  std::vector<hsize_t> dims(H5Sget_simple_extent_ndims(space.get()));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

void ReadInto(hid_t file, const char* name, hid_t type, void* buffer) {
  Handle dataset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) throw std::runtime_error(std::string("cannot open dataset '") + name + "'");
  if (H5Dread(dataset.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer) < 0) {
    throw std::runtime_error(std::string("cannot read dataset '") + name +
                             "' (truncated or corrupt?)");
  }
}

}  // namespace dfmpc::envs::hdf5
