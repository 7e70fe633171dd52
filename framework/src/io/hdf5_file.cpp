// grove::io::Hdf5File over the HDF5 C library (grove/io/hdf5_file.hpp). With the parallel library
// every rank opens the file through MPI-IO and the row transfers are collective; with the serial
// library only a single rank may open it (a clear error otherwise).
#include "grove/io/hdf5_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "grove/core/error.hpp"

#ifdef H5_HAVE_PARALLEL
#include <mpi.h>
#endif

namespace grove::io {

namespace {

// An HDF5 identifier closed by its own close function at the end of its scope.
class Handle {
 public:
  using Close = herr_t (*)(hid_t);
  Handle(hid_t id, Close close) : id_(id), close_(close) {}
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_;
  Close close_;
};

hid_t memoryType(Scalar type) {
  switch (type) {
    case Scalar::kFloat64: return H5T_NATIVE_DOUBLE;
    case Scalar::kFloat32: return H5T_NATIVE_FLOAT;
    case Scalar::kInt64: return H5T_NATIVE_INT64;
    case Scalar::kInt32: return H5T_NATIVE_INT32;
  }
  return H5T_NATIVE_DOUBLE;
}

// The file's type: little-endian IEEE / two's complement, as h5py, yt and ParaView expect.
hid_t fileType(Scalar type) {
  switch (type) {
    case Scalar::kFloat64: return H5T_IEEE_F64LE;
    case Scalar::kFloat32: return H5T_IEEE_F32LE;
    case Scalar::kInt64: return H5T_STD_I64LE;
    case Scalar::kInt32: return H5T_STD_I32LE;
  }
  return H5T_IEEE_F64LE;
}

// Selects rows [first, first + count) of a table in file_space; returns the matching memory
// space. A rank without rows selects nothing, and still takes part in the collective transfer.
Handle selectRows(hid_t file_space, int components, std::int64_t first, std::int64_t count) {
  const int rank = components == 1 ? 1 : 2;
  const std::array<hsize_t, 2> start{static_cast<hsize_t>(first), 0};
  const std::array<hsize_t, 2> extent{static_cast<hsize_t>(count), static_cast<hsize_t>(components)};
  const std::array<hsize_t, 2> one{1, static_cast<hsize_t>(components)};
  Handle memory_space(H5Screate_simple(rank, count > 0 ? extent.data() : one.data(), nullptr), H5Sclose);
  if (count > 0) {
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, extent.data(), nullptr);
  } else {
    H5Sselect_none(file_space);
    H5Sselect_none(memory_space.get());
  }
  return memory_space;
}

// HDF5's own error stack is silenced (grove reports with the file and object named instead).
void silenceHdf5() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

}  // namespace

struct Hdf5File::Impl {
  std::string path;
  hid_t file = -1;
  hid_t transfer = H5P_DEFAULT;  // collective transfers with the parallel library

  ~Impl() {
    if (transfer != H5P_DEFAULT) H5Pclose(transfer);
    if (file >= 0) H5Fclose(file);
  }

  void check(bool ok, const char* what, const std::string& object) const {
    require(ok, "grove::io::Hdf5File", "{} failed for '{}' in {}", what, object, path);
  }

  // Opens a group, creating it and its parents when `create`.
  Handle group(const std::string& name, bool create) const {
    if (name == "/" || H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0)
      return Handle(H5Gopen2(file, name.c_str(), H5P_DEFAULT), H5Gclose);
    require(create, "grove::io::Hdf5File", "{} has no group '{}'", path, name);
    Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(links.get(), 1);
    Handle g(H5Gcreate2(file, name.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    check(g.valid(), "creating the group", name);
    return g;
  }

  // A fresh attribute (an old one of that name is replaced), written from `data`.
  void writeAttribute(const std::string& group_name, const std::string& name, hid_t file_type, hid_t memory_type,
                      hid_t space, const void* data) const {
    Handle g = group(group_name, true);
    if (H5Aexists(g.get(), name.c_str()) > 0) H5Adelete(g.get(), name.c_str());
    Handle a(H5Acreate2(g.get(), name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    check(a.valid(), "creating the attribute", group_name + "/" + name);
    check(H5Awrite(a.get(), memory_type, data) >= 0, "writing the attribute", group_name + "/" + name);
  }

  Handle attribute(const std::string& group_name, const std::string& name) const {
    Handle a(H5Aopen_by_name(file, group_name.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    require(a.valid(), "grove::io::Hdf5File", "{} has no attribute '{}' on '{}'", path, name, group_name);
    return a;
  }

  template <class T>
  std::vector<T> readNumbers(const std::string& group_name, const std::string& name, hid_t memory_type) const {
    Handle a = attribute(group_name, name);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    std::vector<T> values(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
    check(H5Aread(a.get(), memory_type, values.data()) >= 0, "reading the attribute", group_name + "/" + name);
    return values;
  }

  Handle dataset(const std::string& name) const {
    Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
    require(d.valid(), "grove::io::Hdf5File", "{} has no dataset '{}'", path, name);
    return d;
  }
};

Hdf5File::Hdf5File(const std::string& path, Mode mode, const void* native_comm) : impl_(std::make_unique<Impl>()) {
  silenceHdf5();
  Impl& m = *impl_;
  m.path = path;
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
#ifdef H5_HAVE_PARALLEL
  const MPI_Comm comm = native_comm ? *static_cast<const MPI_Comm*>(native_comm) : MPI_COMM_WORLD;
  H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL);
  // Attributes beyond 64 KiB (a long parameter file) need the newer object header format.
  H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  m.transfer = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(m.transfer, H5FD_MPIO_COLLECTIVE);
#else
  (void)native_comm;  // the serial library: one rank (grove/io/snapshot.hpp checks)
  H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
#endif
  if (mode == Mode::kCreate) {
    m.file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
    require(m.file >= 0, "grove::io::Hdf5File", "cannot create {} (is the directory there and writable?)", path);
  } else {
    require(H5Fis_hdf5(path.c_str()) > 0, "grove::io::Hdf5File", "cannot open {}: no such file, or not an HDF5 file",
            path);
    m.file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
    require(m.file >= 0, "grove::io::Hdf5File", "cannot open {} as an HDF5 file", path);
  }
}

Hdf5File::~Hdf5File() = default;

const std::string& Hdf5File::path() const { return impl_->path; }

void Hdf5File::close() {
  Impl& m = *impl_;
  if (m.file < 0) return;
  const herr_t closed = H5Fclose(m.file);
  m.file = -1;
  require(closed >= 0, "grove::io::Hdf5File", "closing {} failed (disk full, or a quota?): the file is incomplete",
          m.path);
}

bool Hdf5File::parallel() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

void Hdf5File::writeAttribute(const std::string& group, const std::string& name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  Handle space(values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  impl_->writeAttribute(group, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), values.data());
}

void Hdf5File::writeAttribute(const std::string& group, const std::string& name,
                              const std::vector<std::int64_t>& values) {
  const hsize_t n = values.size();
  Handle space(values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  impl_->writeAttribute(group, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space.get(), values.data());
}

void Hdf5File::writeAttribute(const std::string& group, const std::string& name, const std::string& text) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  std::string padded = text;
  padded.resize(std::max<std::size_t>(text.size(), 1), '\0');
  impl_->writeAttribute(group, name, type.get(), type.get(), space.get(), padded.data());
}

bool Hdf5File::hasAttribute(const std::string& group, const std::string& name) const {
  if (group != "/" && H5Lexists(impl_->file, group.c_str(), H5P_DEFAULT) <= 0) return false;
  return H5Aexists_by_name(impl_->file, group.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<double> Hdf5File::readDoubles(const std::string& group, const std::string& name) const {
  return impl_->readNumbers<double>(group, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::int64_t> Hdf5File::readIntegers(const std::string& group, const std::string& name) const {
  return impl_->readNumbers<std::int64_t>(group, name, H5T_NATIVE_INT64);
}

std::string Hdf5File::readText(const std::string& group, const std::string& name) const {
  Handle a = impl_->attribute(group, name);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  require(H5Tget_class(type.get()) == H5T_STRING && H5Tis_variable_str(type.get()) <= 0, "grove::io::Hdf5File",
          "attribute '{}' on '{}' in {} is not a fixed-length string", name, group, impl_->path);
  std::string text(H5Tget_size(type.get()), '\0');
  impl_->check(H5Aread(a.get(), type.get(), text.data()) >= 0, "reading the attribute", group + "/" + name);
  text.resize(std::strlen(text.c_str()));
  return text;
}

void Hdf5File::writeRows(const std::string& dataset, Scalar type, int components, std::int64_t total,
                         std::int64_t first, std::int64_t count, const void* data) {
  Impl& m = *impl_;
  require(components >= 1 && first >= 0 && count >= 0 && first + count <= total, "grove::io::Hdf5File::writeRows",
          "rows [{}, {}) of {} with {} components do not fit the table '{}' in {}", first, first + count, total,
          components, dataset, m.path);
  const int rank = components == 1 ? 1 : 2;
  const std::array<hsize_t, 2> dims{static_cast<hsize_t>(total), static_cast<hsize_t>(components)};
  Handle file_space(H5Screate_simple(rank, dims.data(), nullptr), H5Sclose);
  Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(links.get(), 1);
  Handle d(H5Dcreate2(m.file, dataset.c_str(), fileType(type), file_space.get(), links.get(), H5P_DEFAULT,
                      H5P_DEFAULT),
           H5Dclose);
  m.check(d.valid(), "creating the dataset", dataset);
  Handle memory_space = selectRows(file_space.get(), components, first, count);
  m.check(H5Dwrite(d.get(), memoryType(type), memory_space.get(), file_space.get(), m.transfer, data) >= 0,
          "writing rows of the dataset", dataset);
}

bool Hdf5File::hasDataset(const std::string& dataset) const {
  // Every parent must exist for H5Lexists to answer about the last link.
  std::size_t at = 0;
  while ((at = dataset.find('/', at + 1)) != std::string::npos)
    if (H5Lexists(impl_->file, dataset.substr(0, at).c_str(), H5P_DEFAULT) <= 0) return false;
  return H5Lexists(impl_->file, dataset.c_str(), H5P_DEFAULT) > 0;
}

DatasetShape Hdf5File::shape(const std::string& dataset) const {
  Handle d = impl_->dataset(dataset);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  require(rank == 1 || rank == 2, "grove::io::Hdf5File", "dataset '{}' in {} has {} dimensions (a table has 1 or 2)",
          dataset, impl_->path, rank);
  std::array<hsize_t, 2> dims{0, 1};
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return {static_cast<std::int64_t>(dims[0]), rank == 1 ? 1 : static_cast<int>(dims[1])};
}

void Hdf5File::readRows(const std::string& dataset, Scalar type, int components, std::int64_t first,
                        std::int64_t count, void* out) const {
  const Impl& m = *impl_;
  const DatasetShape s = shape(dataset);
  require(s.components == components && first >= 0 && count >= 0 && first + count <= s.rows,
          "grove::io::Hdf5File::readRows", "rows [{}, {}) with {} components asked of '{}' in {}, which holds {} rows of {}",
          first, first + count, components, dataset, m.path, s.rows, s.components);
  Handle d = m.dataset(dataset);
  Handle file_space(H5Dget_space(d.get()), H5Sclose);
  Handle memory_space = selectRows(file_space.get(), components, first, count);
  m.check(H5Dread(d.get(), memoryType(type), memory_space.get(), file_space.get(), m.transfer, out) >= 0,
          "reading rows of the dataset", dataset);
}

}  // namespace grove::io
