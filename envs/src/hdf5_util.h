// Small RAII and read/write helpers over the HDF5 C API.
#ifndef DFMPC_ENVS_SRC_HDF5_UTIL_H_
#define DFMPC_ENVS_SRC_HDF5_UTIL_H_

#include <hdf5.h>

#include <string>
#include <vector>

namespace dfmpc::envs::hdf5 {

// Owns one HDF5 identifier and closes it with the matching H5*close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~Handle() { Reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void Reset();

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// Turns off HDF5's printing of error stacks to stderr for its lifetime
// (errors are reported through exceptions instead) and then restores the
// handler the process had, so a program's own HDF5 use is left as it was.
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t handler_ = nullptr;
  void* data_ = nullptr;
};

// Throws std::runtime_error(what) when `status` is negative.
void Check(herr_t status, const std::string& what);

void WriteStringAttribute(hid_t object, const char* name, const std::string& value);
void WriteInt64Attribute(hid_t object, const char* name, long long value);
void WriteDoubleAttribute(hid_t object, const char* name, double value);
// Read helpers throw std::runtime_error when the attribute is missing.
std::string ReadStringAttribute(hid_t object, const char* name);
long long ReadInt64Attribute(hid_t object, const char* name);
double ReadDoubleAttribute(hid_t object, const char* name);

// A chunked dataset of rows (shape [n, row_dims...]) that grows by appending.
class RowWriter {
 public:
  RowWriter(hid_t file, const char* name, hid_t type, std::vector<hsize_t> row_shape,
            hsize_t chunk_rows, bool compress);
  void Append(const void* rows, hsize_t count);
  hid_t id() const { return dataset_.get(); }

 private:
  Handle dataset_;
  hid_t type_;
  std::vector<hsize_t> row_shape_;
  hsize_t size_ = 0;
};

// Attribute `name` of dataset `dataset`; throws std::runtime_error when
// either is missing.
std::string ReadStringAttribute(hid_t file, const char* dataset, const char* name);

// Shape of dataset `name`; throws std::runtime_error when it is missing.
std::vector<hsize_t> Shape(hid_t file, const char* name);
// Reads all of dataset `name`, converted to `type`, into `buffer` (sized
// by the caller from Shape). Throws when it is unreadable.
void ReadInto(hid_t file, const char* name, hid_t type, void* buffer);

}  // namespace dfmpc::envs::hdf5

#endif  // DFMPC_ENVS_SRC_HDF5_UTIL_H_
