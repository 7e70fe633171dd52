#pragma once
// grove::io::Hdf5File: one HDF5 file opened by every rank of a communicator, through parallel
// HDF5 (MPI-IO, collective transfers) where the library has it, else rank by rank through the
// serial library. The compiled part (framework/src/io/hdf5_file.cpp, library grove_io) is the
// only code that includes hdf5.h; this header speaks in plain arrays, so user translation units
// need neither hdf5.h nor mpi.h. grove/io/snapshot.hpp builds the particle snapshots on it.
//
// Datasets are tables: `rows` rows of `components` scalars (1: a column, 3: vectors). Every rank
// writes or reads its own run of rows [first, first + count); every call here is collective (all
// ranks of the communicator, in the same order), attribute writes included (every rank passes
// the same value).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace grove::io {

enum class Scalar : std::uint8_t { kFloat64, kFloat32, kInt64, kInt32 };

struct DatasetShape {
  std::int64_t rows = 0;
  int components = 0;
};

class Hdf5File {
 public:
  enum class Mode { kCreate, kRead };
  // native_comm: pointer to an MPI_Comm (grove::detail::nativeComm), null in a build without MPI.
  // kCreate truncates; kRead refuses a missing or non-HDF5 file with an error naming it.
  Hdf5File(const std::string& path, Mode mode, const void* native_comm);
  ~Hdf5File();
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  const std::string& path() const;
  // Closes the file (collective), reporting a failure: with parallel HDF5 the metadata reach the
  // disk only here. The destructor closes a file still open without a report.
  void close();

  // Attributes of a group (created with its parents when missing), e.g. "/Header".
  void writeAttribute(const std::string& group, const std::string& name, const std::vector<double>& values);
  void writeAttribute(const std::string& group, const std::string& name, const std::vector<std::int64_t>& values);
  void writeAttribute(const std::string& group, const std::string& name, const std::string& text);
  bool hasAttribute(const std::string& group, const std::string& name) const;
  std::vector<double> readDoubles(const std::string& group, const std::string& name) const;
  std::vector<std::int64_t> readIntegers(const std::string& group, const std::string& name) const;
  std::string readText(const std::string& group, const std::string& name) const;

  // A table of `total` rows at `dataset` ("/PartType0/Coordinates"); this rank's rows
  // [first, first + count) from `data` (count * components scalars of `type`).
  void writeRows(const std::string& dataset, Scalar type, int components, std::int64_t total, std::int64_t first,
                 std::int64_t count, const void* data);
  bool hasDataset(const std::string& dataset) const;
  DatasetShape shape(const std::string& dataset) const;
  // This rank's rows [first, first + count) into `out`, converted to `type` (HDF5 converts).
  void readRows(const std::string& dataset, Scalar type, int components, std::int64_t first, std::int64_t count,
                void* out) const;

  // Whether this build has HDF5 at all (grove_io compiled) and whether it is the parallel library.
  static bool parallel();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove::io
