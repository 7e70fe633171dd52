#pragma once
/// @file
/// grove::io::Hdf5File: one HDF5 file, through parallel HDF5 (MPI-IO) where the library has it,
/// else through the serial library, one process writing and any number reading. The compiled part
/// (framework/src/io/hdf5_file.cpp, library grove_io) is the only code that includes hdf5.h; this
/// header speaks in plain arrays, so user translation units need neither hdf5.h nor mpi.h.
/// grove/io/snapshot.hpp builds the particle snapshots on it.
///
/// Datasets are tables: `rows` rows of `components` scalars (1: a column, 3: vectors). A file is
/// written in two stages, so that a failure on one rank never leaves the others inside HDF5's
/// collective calls (parallel HDF5 skips its own collective steps on an error: the hang of issue 29):
/// @verbatim
///   kCreate  one process alone (the serial driver) makes the layout: groups, attributes, and
///            tables whose space is allocated but not filled. Nothing here is collective.
///   kWrite   every rank of the communicator opens the file (collective) and writes its own rows
///            (independent transfers, no metadata changes), then flush() and close().
/// @endverbatim
/// The row transfers and flush() return their problem instead of throwing, for the caller to agree
/// on across ranks (grove::agreeOnFailure) before the next collective call. kRead opens a file for
/// reading (collective).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace grove::io {

/// The scalar types of a table's entries, in memory and in the file (little-endian there).
enum class Scalar : std::uint8_t {
  kFloat64,  ///< double
  kFloat32,  ///< float
  kInt64,    ///< std::int64_t
  kInt32     ///< std::int32_t
};

/// The shape of a table, as Hdf5File::shape reads it.
struct DatasetShape {
  std::int64_t rows = 0;  ///< rows of the table
  int components = 0;  ///< scalars per row (1 for a one-dimensional table)
  std::optional<Scalar> type;  ///< the file's type, when one of Scalar's (signed integers, 4- or 8-byte floats)
};

/// One HDF5 file opened in one Mode, closed on destruction; neither copyable nor movable. Every
/// failure throws grove::Error naming the file, except those of flush(), close(), writeRows() and
/// readRows(), which return their problem (nullopt: none). Needs the grove_io library (a build
/// with HDF5).
class Hdf5File {
 public:
  /// What the file is opened for (see the file's description).
  enum class Mode {
    kCreate,  ///< one process makes the layout: groups, attributes, tables allocated but not filled
    kWrite,   ///< the ranks write their rows into an existing layout
    kRead     ///< read only
  };
  /// Opens `path` for `mode`. native_comm: pointer to an MPI_Comm (grove::detail::nativeComm) whose
  /// ranks open the file together through MPI-IO (the parallel library only; then collective over
  /// it); null: this process alone (a build without MPI, or rank 0 writing for all). Not used by
  /// kCreate, nor by the serial library, with which every process opens the file on its own.
  /// kCreate truncates (and counts as one write for GROVE_FAULT_INJECT); kWrite and kRead refuse a
  /// missing or non-HDF5 file. Throws grove::Error naming the file when it cannot be created or
  /// opened.
  Hdf5File(const std::string& path, Mode mode, const void* native_comm);
  /// Closes the file if still open, without a report (call close() to hear of a failure).
  ~Hdf5File();
  /// Not copyable.
  Hdf5File(const Hdf5File&) = delete;
  /// Not copyable.
  Hdf5File& operator=(const Hdf5File&) = delete;

  /// The path the file was opened with.
  const std::string& path() const;
  /// kWrite: what was written, synced to the disk (collective where the file was opened
  /// collectively); the problem, if any, for the caller to agree on. Nothing once closed.
  [[nodiscard]] std::optional<std::string> flush();
  /// Closes the file (collective except for kCreate, whose close writes the layout); the problem,
  /// if any. Closing a closed file does nothing. The destructor closes a file still open without a
  /// report.
  [[nodiscard]] std::optional<std::string> close();

  /// kCreate: attribute `name` of a group (created with its parents when missing, e.g. "/Header") or
  /// of a table ("/PartType1/Coordinates"), replacing one of that name: 64-bit floats, a scalar when
  /// values holds one. Throws grove::Error in another mode or when HDF5 fails.
  void writeAttribute(const std::string& object, const std::string& name, const std::vector<double>& values);
  /// kCreate: as above, 64-bit signed integers.
  void writeAttribute(const std::string& object, const std::string& name, const std::vector<std::int64_t>& values);
  /// kCreate: as above, one unsigned 64-bit integer (a scalar).
  void writeAttribute(const std::string& object, const std::string& name, const std::uint64_t value);
  /// kCreate: as above, a fixed-length string (null-padded; at least one byte).
  void writeAttribute(const std::string& object, const std::string& name, const std::string& text);
  /// kCreate: a table of `rows` rows of `components` scalars at `dataset` ("/PartType0/Coordinates",
  /// parent groups created), stored as `type`, its space allocated (not filled) for kWrite to fill.
  /// One component makes a one-dimensional table. Needs components >= 1 and rows >= 0; throws
  /// grove::Error otherwise, in another mode, or when HDF5 fails.
  void createTable(const std::string& dataset, Scalar type, int components, std::int64_t rows);

  /// Whether `object` exists and has an attribute `name`.
  bool hasAttribute(const std::string& object, const std::string& name) const;
  /// The values of attribute `name` of `object`, converted to double (one for a scalar). Throws
  /// grove::Error when it is missing or cannot be read.
  std::vector<double> readDoubles(const std::string& object, const std::string& name) const;
  /// The values of attribute `name` of `object`, converted to std::int64_t; errors as readDoubles.
  std::vector<std::int64_t> readIntegers(const std::string& object, const std::string& name) const;
  /// The one value of attribute `name` of `object`, as std::uint64_t; throws grove::Error when it
  /// is missing or holds another number of values.
  std::uint64_t readUnsigned(const std::string& object, const std::string& name) const;
  /// The fixed-length string attribute `name` of `object`, up to its first null; throws
  /// grove::Error when it is missing or not a fixed-length string.
  std::string readText(const std::string& object, const std::string& name) const;

  /// kWrite: this rank's rows [first, first + count) of the table from `data` (count * components
  /// scalars of `type`, converted to the table's). Independent; a write under GROVE_FAULT_INJECT
  /// fails here. Returns the problem, if any (rows outside the table, a components count that does
  /// not match, a failed write); throws grove::Error in another mode or for a missing table.
  [[nodiscard]] std::optional<std::string> writeRows(const std::string& dataset, Scalar type, int components,
                                                     std::int64_t first, std::int64_t count, const void* data);
  /// Whether `dataset` exists (every link of its path).
  bool hasDataset(const std::string& dataset) const;
  /// The names of the objects in a group ("/PartType1": "Coordinates", ...), in name order; none
  /// for a missing group or a table.
  std::vector<std::string> children(const std::string& group) const;
  /// The rows, components and type of table `dataset`; throws grove::Error when it is missing or
  /// has other than 1 or 2 dimensions.
  DatasetShape shape(const std::string& dataset) const;
  /// This rank's rows [first, first + count) into `out` (room for count * components scalars),
  /// converted to `type` (HDF5 converts). Independent. Returns the problem, if any (rows outside
  /// the table, another components count, a failed read); throws grove::Error for a missing table.
  [[nodiscard]] std::optional<std::string> readRows(const std::string& dataset, Scalar type, int components,
                                                    std::int64_t first, std::int64_t count, void* out) const;

  /// Whether the HDF5 library of this build is the parallel one (MPI-IO); callable only where
  /// grove_io is compiled (a build with HDF5).
  static bool parallel();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove::io
