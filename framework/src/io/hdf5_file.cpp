// grove::io::Hdf5File over the HDF5 C library (grove/io/hdf5_file.hpp). The layout is made by one
// process with the serial driver; with the parallel library every rank then opens the file through
// MPI-IO and writes its rows independently, so that no write error happens inside one of HDF5's
// collective steps (whose error paths skip the steps the other ranks wait in). With the serial
// library one process writes (rank 0, every rank's rows) and every rank reads on its own.
#include "grove/io/hdf5_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include <sys/statvfs.h>

#include "grove/core/error.hpp"
#include "grove/core/fault_injection.hpp"

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

// ": <the system's reason>" after an HDF5 call on `path` failed (HDF5's own printing is
// silenced): errno as the call left it (cleared before the call); else, when the file system holding
// path has fewer than `bytes` free, ENOSPC's text and the bytes free (the MPI-IO driver keeps the
// system's reason to itself); else the innermost description on HDF5's error stack.
std::string systemReason(const std::string& path, std::uint64_t bytes) {
  const int saved_errno = errno;
  if (saved_errno != 0) return fmt::format(": {}", std::strerror(saved_errno));
  const std::string parent = std::filesystem::path(path).parent_path().string();
  struct statvfs disk {};
  if (statvfs(parent.empty() ? "." : parent.c_str(), &disk) == 0) {
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(disk.f_bavail) * disk.f_frsize;
    if (free_bytes < bytes) return fmt::format(": {} ({} bytes free there)", std::strerror(ENOSPC), free_bytes);
  }
  std::vector<std::string> descriptions;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
        if (e->desc && *e->desc) static_cast<std::vector<std::string>*>(out)->emplace_back(e->desc);
        return 0;
      },
      &descriptions);
  return descriptions.empty() ? std::string() : ": " + descriptions.front();
}

}  // namespace

struct Hdf5File::Impl {
  std::string path;
  Mode mode = Mode::kRead;
  hid_t file = -1;

  ~Impl() {
    if (file >= 0) H5Fclose(file);
  }

  void check(bool ok, const char* what, const std::string& object) const {
    require(ok, "grove::io::Hdf5File", "{} failed for '{}' in {}", what, object, path);
  }

  // Whether every link of `name` ("/a/b/c") exists (H5Lexists answers only about the last one).
  bool exists(const std::string& name) const {
    if (name == "/") return true;
    std::size_t at = 0;
    while ((at = name.find('/', at + 1)) != std::string::npos)
      if (H5Lexists(file, name.substr(0, at).c_str(), H5P_DEFAULT) <= 0) return false;
    return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
  }

  // Opens a group or a table; a missing one is created as a group (with its parents) when `create`.
  Handle object(const std::string& name, bool create) const {
    if (exists(name)) return Handle(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose);
    require(create, "grove::io::Hdf5File", "{} has no object '{}'", path, name);
    Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(links.get(), 1);
    Handle g(H5Gcreate2(file, name.c_str(), links.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    check(g.valid(), "creating the group", name);
    return g;
  }

  void requireMode(Mode wanted, const char* what) const {
    require(mode == wanted, "grove::io::Hdf5File", "{}: {} needs the file opened {}", path, what,
            wanted == Mode::kCreate ? "to create its layout (kCreate)" : "to write rows (kWrite)");
  }

  // A fresh attribute (an old one of that name is replaced), written from `data`.
  void writeAttribute(const std::string& object_name, const std::string& name, hid_t file_type, hid_t memory_type,
                      hid_t space, const void* data) const {
    requireMode(Mode::kCreate, "writing an attribute");
    Handle o = object(object_name, true);
    if (H5Aexists(o.get(), name.c_str()) > 0) H5Adelete(o.get(), name.c_str());
    Handle a(H5Acreate2(o.get(), name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    check(a.valid(), "creating the attribute", object_name + "/" + name);
    check(H5Awrite(a.get(), memory_type, data) >= 0, "writing the attribute", object_name + "/" + name);
  }

  Handle attribute(const std::string& object_name, const std::string& name) const {
    Handle a(H5Aopen_by_name(file, object_name.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    require(a.valid(), "grove::io::Hdf5File", "{} has no attribute '{}' on '{}'", path, name, object_name);
    return a;
  }

  template <class T>
  std::vector<T> readNumbers(const std::string& object_name, const std::string& name, hid_t memory_type) const {
    Handle a = attribute(object_name, name);
    Handle space(H5Aget_space(a.get()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    std::vector<T> values(static_cast<std::size_t>(std::max<hssize_t>(n, 0)));
    check(H5Aread(a.get(), memory_type, values.data()) >= 0, "reading the attribute", object_name + "/" + name);
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
  m.mode = mode;
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // Attributes beyond 64 KiB (a long parameter file) need the newer object header format.
  H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  if (mode == Mode::kCreate) {
    // One process, the serial driver: nothing here waits for another rank.
    if (std::string fault = grove::detail::injectedWriteFault(grove::detail::worldRankForMessages()); !fault.empty())
      throw Error("grove::io::Hdf5File", fmt::format("cannot create {}: {}", path, fault));
    errno = 0;
    m.file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
    if (m.file < 0)
      throw Error("grove::io::Hdf5File", fmt::format("cannot create {} (is the directory there and writable?){}", path,
                                                     systemReason(path, 1)));
    return;
  }
#ifdef H5_HAVE_PARALLEL
  // No communicator: this process alone, through the default (POSIX) driver, as with the serial
  // library (rank 0 writing every rank's rows, grove/io/rows_through_rank_zero.hpp).
  if (native_comm) H5Pset_fapl_mpio(access.get(), *static_cast<const MPI_Comm*>(native_comm), MPI_INFO_NULL);
#else
  // The serial library: each process opens the file on its own. Several may read it at once;
  // only one writes (grove/io/snapshot.hpp sees to it).
  (void)native_comm;
#endif
  require(H5Fis_hdf5(path.c_str()) > 0, "grove::io::Hdf5File", "cannot open {}: no such file, or not an HDF5 file",
          path);
  m.file = H5Fopen(path.c_str(), mode == Mode::kWrite ? H5F_ACC_RDWR : H5F_ACC_RDONLY, access.get());
  require(m.file >= 0, "grove::io::Hdf5File", "cannot open {} as an HDF5 file", path);
}

Hdf5File::~Hdf5File() = default;

const std::string& Hdf5File::path() const { return impl_->path; }

std::optional<std::string> Hdf5File::flush() {
  Impl& m = *impl_;
  errno = 0;
  if (m.file < 0 || H5Fflush(m.file, H5F_SCOPE_GLOBAL) >= 0) return std::nullopt;
  return fmt::format("{}: syncing it to the disk failed{}", m.path, systemReason(m.path, 1));
}

std::optional<std::string> Hdf5File::close() {
  Impl& m = *impl_;
  if (m.file < 0) return std::nullopt;
  errno = 0;
  const herr_t closed = H5Fclose(m.file);
  m.file = -1;
  if (closed >= 0) return std::nullopt;
  return fmt::format("{}: closing it failed, so it may be incomplete{}", m.path, systemReason(m.path, 1));
}

bool Hdf5File::parallel() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

void Hdf5File::writeAttribute(const std::string& object, const std::string& name, const std::vector<double>& values) {
  const hsize_t n = values.size();
  Handle space(values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  impl_->writeAttribute(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, space.get(), values.data());
}

void Hdf5File::writeAttribute(const std::string& object, const std::string& name,
                              const std::vector<std::int64_t>& values) {
  const hsize_t n = values.size();
  Handle space(values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  impl_->writeAttribute(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, space.get(), values.data());
}

void Hdf5File::writeAttribute(const std::string& object, const std::string& name, const std::uint64_t value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  impl_->writeAttribute(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, space.get(), &value);
}

void Hdf5File::writeAttribute(const std::string& object, const std::string& name, const std::string& text) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), std::max<std::size_t>(text.size(), 1));
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  std::string padded = text;
  padded.resize(std::max<std::size_t>(text.size(), 1), '\0');
  impl_->writeAttribute(object, name, type.get(), type.get(), space.get(), padded.data());
}

void Hdf5File::createTable(const std::string& dataset, Scalar type, int components, std::int64_t rows) {
  Impl& m = *impl_;
  m.requireMode(Mode::kCreate, "creating a table");
  require(components >= 1 && rows >= 0, "grove::io::Hdf5File::createTable", "a table of {} rows of {} components "
          "('{}' in {})", rows, components, dataset, m.path);
  const int rank = components == 1 ? 1 : 2;
  const std::array<hsize_t, 2> dims{static_cast<hsize_t>(rows), static_cast<hsize_t>(components)};
  Handle space(H5Screate_simple(rank, dims.data(), nullptr), H5Sclose);
  Handle links(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(links.get(), 1);
  // Contiguous, allocated now and never filled: the ranks' row writes change no metadata later.
  Handle layout(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(layout.get(), H5D_CONTIGUOUS);
  H5Pset_alloc_time(layout.get(), H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(layout.get(), H5D_FILL_TIME_NEVER);
  errno = 0;
  Handle d(H5Dcreate2(m.file, dataset.c_str(), fileType(type), space.get(), links.get(), layout.get(), H5P_DEFAULT),
           H5Dclose);
  if (!d.valid())
    throw Error("grove::io::Hdf5File",
                fmt::format("creating the table '{}' in {} failed{}", dataset, m.path, systemReason(m.path, 1)));
}

bool Hdf5File::hasAttribute(const std::string& object, const std::string& name) const {
  if (!impl_->exists(object)) return false;
  return H5Aexists_by_name(impl_->file, object.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::vector<double> Hdf5File::readDoubles(const std::string& object, const std::string& name) const {
  return impl_->readNumbers<double>(object, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::int64_t> Hdf5File::readIntegers(const std::string& object, const std::string& name) const {
  return impl_->readNumbers<std::int64_t>(object, name, H5T_NATIVE_INT64);
}

std::uint64_t Hdf5File::readUnsigned(const std::string& object, const std::string& name) const {
  const std::vector<std::uint64_t> values = impl_->readNumbers<std::uint64_t>(object, name, H5T_NATIVE_UINT64);
  require(values.size() == 1, "grove::io::Hdf5File", "attribute '{}' on '{}' in {} holds {} values, not one", name,
          object, impl_->path, values.size());
  return values[0];
}

std::string Hdf5File::readText(const std::string& object, const std::string& name) const {
  Handle a = impl_->attribute(object, name);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  require(H5Tget_class(type.get()) == H5T_STRING && H5Tis_variable_str(type.get()) <= 0, "grove::io::Hdf5File",
          "attribute '{}' on '{}' in {} is not a fixed-length string", name, object, impl_->path);
  std::string text(H5Tget_size(type.get()), '\0');
  impl_->check(H5Aread(a.get(), type.get(), text.data()) >= 0, "reading the attribute", object + "/" + name);
  text.resize(std::strlen(text.c_str()));
  return text;
}

std::optional<std::string> Hdf5File::writeRows(const std::string& dataset, Scalar type, int components,
                                               std::int64_t first, std::int64_t count, const void* data) {
  Impl& m = *impl_;
  m.requireMode(Mode::kWrite, "writing rows");
  // Every rank opens the table (HDF5 wants its metadata calls made alike); the transfer is this
  // rank's alone.
  Handle d = m.dataset(dataset);
  Handle file_space(H5Dget_space(d.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  const int rank = H5Sget_simple_extent_ndims(file_space.get());
  H5Sget_simple_extent_dims(file_space.get(), dims, nullptr);
  const auto rows = static_cast<std::int64_t>(dims[0]);
  if (components < 1 || (rank == 1) != (components == 1) || (rank == 2 && dims[1] != static_cast<hsize_t>(components)) ||
      first < 0 || count < 0 || first + count > rows)
    return fmt::format("{}: rows [{}, {}) of {} components do not fit the table '{}' of {} rows", m.path, first,
                       first + count, components, dataset, rows);
  if (std::string fault = grove::detail::injectedWriteFault(grove::detail::worldRankForMessages()); !fault.empty())
    return fmt::format("{}: writing rows [{}, {}) of '{}' failed: {}", m.path, first, first + count, dataset, fault);
  if (count == 0) return std::nullopt;
  Handle memory_space = selectRows(file_space.get(), components, first, count);
  const std::uint64_t bytes = static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(components) *
                              H5Tget_size(memoryType(type));
  errno = 0;
  if (H5Dwrite(d.get(), memoryType(type), memory_space.get(), file_space.get(), H5P_DEFAULT, data) >= 0)
    return std::nullopt;
  return fmt::format("{}: writing rows [{}, {}) of '{}' failed{}", m.path, first, first + count, dataset,
                     systemReason(m.path, bytes));
}

bool Hdf5File::hasDataset(const std::string& dataset) const { return impl_->exists(dataset); }

std::vector<std::string> Hdf5File::children(const std::string& group) const {
  std::vector<std::string> names;
  if (!impl_->exists(group)) return names;
  Handle g(H5Gopen2(impl_->file, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.valid()) return names;  // a table, not a group
  hsize_t at = 0;
  impl_->check(H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_INC, &at,
                          [](hid_t, const char* name, const H5L_info_t*, void* out) -> herr_t {
                            static_cast<std::vector<std::string>*>(out)->emplace_back(name);
                            return 0;
                          },
                          &names) >= 0,
               "listing the group", group);
  return names;
}

DatasetShape Hdf5File::shape(const std::string& dataset) const {
  Handle d = impl_->dataset(dataset);
  Handle space(H5Dget_space(d.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  require(rank == 1 || rank == 2, "grove::io::Hdf5File", "dataset '{}' in {} has {} dimensions (a table has 1 or 2)",
          dataset, impl_->path, rank);
  std::array<hsize_t, 2> dims{0, 1};
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  DatasetShape s{static_cast<std::int64_t>(dims[0]), rank == 1 ? 1 : static_cast<int>(dims[1]), std::nullopt};
  Handle type(H5Dget_type(d.get()), H5Tclose);
  const H5T_class_t kind = H5Tget_class(type.get());
  const std::size_t size = H5Tget_size(type.get());
  if (kind == H5T_FLOAT && size == 8) s.type = Scalar::kFloat64;
  if (kind == H5T_FLOAT && size == 4) s.type = Scalar::kFloat32;
  if (kind == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_2 && size == 8) s.type = Scalar::kInt64;
  if (kind == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_2 && size == 4) s.type = Scalar::kInt32;
  return s;
}

std::optional<std::string> Hdf5File::readRows(const std::string& dataset, Scalar type, int components,
                                              std::int64_t first, std::int64_t count, void* out) const {
  const Impl& m = *impl_;
  const DatasetShape s = shape(dataset);
  if (s.components != components || first < 0 || count < 0 || first + count > s.rows)
    return fmt::format("{}: rows [{}, {}) with {} components asked of '{}', which holds {} rows of {}", m.path, first,
                       first + count, components, dataset, s.rows, s.components);
  if (count == 0) return std::nullopt;
  Handle d = m.dataset(dataset);
  Handle file_space(H5Dget_space(d.get()), H5Sclose);
  Handle memory_space = selectRows(file_space.get(), components, first, count);
  errno = 0;
  if (H5Dread(d.get(), memoryType(type), memory_space.get(), file_space.get(), H5P_DEFAULT, out) >= 0)
    return std::nullopt;
  return fmt::format("{}: reading rows [{}, {}) of '{}' failed{}", m.path, first, first + count, dataset,
                     systemReason(m.path, 0));
}

}  // namespace grove::io
