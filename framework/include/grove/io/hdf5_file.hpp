#pragma once
// grove::io::Hdf5File: one HDF5 file, through parallel HDF5 (MPI-IO) where the library has it,
// else through the serial library, one process writing and any number reading. The compiled part
// (framework/src/io/hdf5_file.cpp, library grove_io) is the only code that includes hdf5.h; this
// header speaks in plain arrays, so user translation units need neither hdf5.h nor mpi.h.
// grove/io/snapshot.hpp builds the particle snapshots on it.
//
// Datasets are tables: `rows` rows of `components` scalars (1: a column, 3: vectors). A file is
// written in two stages, so that a failure on one rank never leaves the others inside HDF5's
// collective calls (parallel HDF5 skips its own collective steps on an error: the hang of issue 29):
//   kCreate  one process alone (the serial driver) makes the layout: groups, attributes, and
//            tables whose space is allocated but not filled. Nothing here is collective.
//   kWrite   every rank of the communicator opens the file (collective) and writes its own rows
//            (independent transfers, no metadata changes), then flush() and close().
// The row transfers and flush() return their problem instead of throwing, for the caller to agree
// on across ranks (grove::agreeOnFailure) before the next collective call. kRead opens a file for
// reading (collective).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace grove::io {

enum class Scalar : std::uint8_t { kFloat64, kFloat32, kInt64, kInt32 };

struct DatasetShape {
  std::int64_t rows = 0;
  int components = 0;
  std::optional<Scalar> type;  // the file's type, when it is one of Scalar's
};

class Hdf5File {
 public:
  enum class Mode { kCreate, kWrite, kRead };
  // native_comm: pointer to an MPI_Comm (grove::detail::nativeComm) whose ranks open the file
  // together through MPI-IO (the parallel library only); null: this process alone (a build
  // without MPI, or rank 0 writing for all). Not used by kCreate, nor by the serial library, with
  // which every process opens the file on its own. kCreate truncates (and counts as one write for GROVE_FAULT_INJECT); kWrite
  // and kRead refuse a missing or non-HDF5 file with an error naming it.
  Hdf5File(const std::string& path, Mode mode, const void* native_comm);
  ~Hdf5File();
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  const std::string& path() const;
  // kWrite: what was written, synced to the disk (collective; the problem, if any, for the caller
  // to agree on).
  [[nodiscard]] std::optional<std::string> flush();
  // Closes the file (collective except for kCreate, whose close writes the layout); the problem,
  // if any. The destructor closes a file still open without a report.
  [[nodiscard]] std::optional<std::string> close();

  // kCreate: attributes of a group (created with its parents when missing, e.g. "/Header") or of a
  // table ("/PartType1/Coordinates").
  void writeAttribute(const std::string& object, const std::string& name, const std::vector<double>& values);
  void writeAttribute(const std::string& object, const std::string& name, const std::vector<std::int64_t>& values);
  void writeAttribute(const std::string& object, const std::string& name, const std::uint64_t value);
  void writeAttribute(const std::string& object, const std::string& name, const std::string& text);
  // kCreate: a table of `rows` rows at `dataset` ("/PartType0/Coordinates"), its space allocated
  // for kWrite to fill.
  void createTable(const std::string& dataset, Scalar type, int components, std::int64_t rows);

  bool hasAttribute(const std::string& object, const std::string& name) const;
  std::vector<double> readDoubles(const std::string& object, const std::string& name) const;
  std::vector<std::int64_t> readIntegers(const std::string& object, const std::string& name) const;
  std::uint64_t readUnsigned(const std::string& object, const std::string& name) const;
  std::string readText(const std::string& object, const std::string& name) const;

  // kWrite: this rank's rows [first, first + count) of the table from `data` (count * components
  // scalars of `type`). Independent; a write under GROVE_FAULT_INJECT fails here.
  [[nodiscard]] std::optional<std::string> writeRows(const std::string& dataset, Scalar type, int components,
                                                     std::int64_t first, std::int64_t count, const void* data);
  bool hasDataset(const std::string& dataset) const;
  // The names of the objects in a group ("/PartType1": "Coordinates", ...), in name order; none
  // for a missing group.
  std::vector<std::string> children(const std::string& group) const;
  DatasetShape shape(const std::string& dataset) const;
  // This rank's rows [first, first + count) into `out`, converted to `type` (HDF5 converts).
  // Independent.
  [[nodiscard]] std::optional<std::string> readRows(const std::string& dataset, Scalar type, int components,
                                                    std::int64_t first, std::int64_t count, void* out) const;

  // Whether this build has HDF5 at all (grove_io compiled) and whether it is the parallel library.
  static bool parallel();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove::io
