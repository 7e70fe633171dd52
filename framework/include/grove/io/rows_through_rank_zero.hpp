#pragma once
/// @file
/// A snapshot's rows written by rank 0 alone, every other rank's rows sent to it: how grove writes
/// one HDF5 file from several ranks when its HDF5 library is the serial one (the GPU machine's),
/// which only one process may open for writing (grove/io/snapshot.hpp picks it). The rows reach
/// rank 0 in pieces of at most rowPieceBytes(), one source rank and one table at a time, so rank 0
/// holds one piece beside its own particles, never the whole snapshot, and no message outgrows an
/// MPI count. The file and its rows are byte for byte those of a parallel write (the same layout,
/// made before, and the same rows at the same places).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/io/hdf5_file.hpp"

namespace grove::io::detail {

// One table of a snapshot and this rank's rows of it, packed.
struct TableRows {
  std::string dataset;  // "/PartType0/Coordinates"
  Scalar type;
  int components;
  std::size_t row_bytes;
  const std::vector<std::byte>* rows;
};

inline constexpr int kSnapshotRowsTag = 0x6710;

// The largest piece of rows one message carries (whole rows; at least one). A variable, not a
// constant, so that tests can make it small and cross piece borders with few particles.
inline std::size_t& rowPieceBytes() {
  static std::size_t bytes = std::size_t{64} << 20;
  return bytes;
}

// Collective. Rank 0 opens `path` alone (made already by writeSnapshotLayout) and writes every
// rank's rows of every table in rank order, rank r's at row first_rows[r]; the others send theirs.
// Returns rank 0's problem (a write or the close failed), for the caller to agree on: after a
// failure rank 0 still receives every piece, so no rank waits for it.
inline std::optional<std::string> writeRowsThroughRankZero(const Comm& comm, const std::string& path,
                                                           const std::vector<TableRows>& tables,
                                                           const std::vector<std::int64_t>& counts,
                                                           const std::vector<std::int64_t>& first_rows) {
  std::optional<std::string> problem;
  std::optional<Hdf5File> file;
  if (comm.isRoot()) {
    try {
      file.emplace(path, Hdf5File::Mode::kWrite, nullptr);  // null: this process alone
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  std::vector<std::byte> piece;
  for (int source = 0; source < comm.size(); ++source) {
    const std::int64_t rows = counts[static_cast<std::size_t>(source)];
    for (const TableRows& t : tables) {
      const auto piece_rows = static_cast<std::int64_t>(std::max<std::size_t>(1, rowPieceBytes() / t.row_bytes));
      // At least one call per rank and table, also for a rank without rows, as in a parallel
      // write (GROVE_FAULT_INJECT counts the same writes on rank 0).
      for (std::int64_t done = 0; done == 0 || done < rows; done += piece_rows) {
        const std::int64_t n = std::min(piece_rows, rows - done);
        const std::size_t bytes = static_cast<std::size_t>(n) * t.row_bytes;
        const std::size_t offset = static_cast<std::size_t>(done) * t.row_bytes;
        if (comm.isRoot()) {
          const std::byte* data = nullptr;
          if (source == 0) {
            data = t.rows->data() + offset;
          } else if (n > 0) {
            piece.resize(bytes);
            comm.irecv(std::span<std::byte>(piece), source, kSnapshotRowsTag).wait();
            data = piece.data();
          }
          if (!problem && file)
            problem = file->writeRows(t.dataset, t.type, t.components, first_rows[static_cast<std::size_t>(source)] + done,
                                      n, data);
        } else if (comm.rank() == source && n > 0) {
          comm.isend(std::span<const std::byte>(t.rows->data() + offset, bytes), 0, kSnapshotRowsTag).wait();
        }
      }
    }
  }
  if (file) {
    if (auto p = file->flush(); !problem) problem = std::move(p);
    if (auto p = file->close(); !problem) problem = std::move(p);
  }
  return problem;
}

}  // namespace grove::io::detail
