#pragma once
/// @file
/// XDMF descriptions of HDF5 snapshots, so that ParaView and VisIt open them directly (as SWIFT
/// writes one beside each snapshot): an XML file that names, for each particle type of the
/// snapshot, its Coordinates as the points of a Polyvertex grid and every other table of the type
/// as an attribute of the points (N×3: a vector, N: a scalar), the data staying in the HDF5 file.
///
/// @verbatim
///   out/snapshot_00010.hdf5    written by grove::io::writeSnapshot
///   out/snapshot_00010.xdmf    written beside it by writeSnapshot (writeXdmf)
///   out/snapshots.xdmf         writeXdmfSeries (or writeXdmfSeriesBeside, over the snapshots in
///                              out/): every snapshot of a run as a temporal collection, one grid
///                              per snapshot at its /Header/Time (ParaView's time steps)
/// @endverbatim
///
/// The descriptions are made from what the HDF5 file holds (its /Header and the tables of its
/// /PartTypeN groups), so they also serve snapshots written before, or by other programs in
/// GADGET's layout. XDMF 2 (ParaView's "XDMF Reader", VisIt's Xdmf plugin). A snapshot of several
/// particle types is a spatial collection of one grid per type; a type without particles is left
/// out. Paths to the data are relative to the XDMF file, so a directory of both moves as a whole.
/// Not collective: one process writes (writeSnapshot: rank 0, after the snapshot is complete).
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "grove/comm/agree.hpp"
#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/io/checksum.hpp"

namespace grove::io {

/// The XDMF path beside a snapshot: "out/snapshot_00010.hdf5" → "out/snapshot_00010.xdmf" (the
/// extension replaced, or added). Touches no file.
std::string xdmfPathOf(const std::string& snapshot_path);

/// The XDMF text describing the snapshot at snapshot_path, the data named relative to the
/// directory `relative_to` (that of the XDMF file). Reads the file (not collective). Throws
/// grove::Error naming the file when it is no snapshot (no /Header/NumPart_Total, a particle type
/// without Coordinates, Coordinates whose rows are not the particle count) or holds no particle.
/// Tables of another row count or shape are left out.
std::string xdmfOfSnapshot(const std::string& snapshot_path, const std::string& relative_to);

/// The XDMF text of a temporal collection of the snapshots (in that order), each at its
/// /Header/Time (0 when missing), the data named relative to `relative_to`. Snapshots without
/// particles are left out. Throws grove::Error as xdmfOfSnapshot, and when the list is empty or
/// no snapshot holds a particle.
std::string xdmfOfSeries(const std::vector<std::string>& snapshot_paths, const std::string& relative_to);

namespace detail {
// `text` into path, through "<path>.tmp" renamed over it when written and synced; throws
// grove::Error naming the file and the reason.
inline void writeTextDurably(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw Error("grove::io::writeXdmf", fmt::format("cannot write {} (is the directory there, writable, not full?)",
                                                      temporary));
    }
  }
  if (std::optional<std::string> problem = renameDurably(temporary, path)) throw Error("grove::io::writeXdmf", *problem);
}
inline std::string directoryOf(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}
}  // namespace detail

/// Writes xdmfPathOf(snapshot_path) beside the snapshot (through a temporary file renamed over
/// it); returns its path. Not collective. Throws grove::Error as xdmfOfSnapshot, or naming the
/// file when it cannot be written.
inline std::string writeXdmf(const std::string& snapshot_path) {
  const std::string path = xdmfPathOf(snapshot_path);
  detail::writeTextDurably(path, xdmfOfSnapshot(snapshot_path, detail::directoryOf(path)));
  return path;
}

/// Writes series_path: every snapshot in `snapshot_paths` (in that order, their times increasing)
/// as one temporal collection (through a temporary file renamed over it). Not collective. Throws
/// grove::Error naming the file at fault.
inline void writeXdmfSeries(const std::string& series_path, const std::vector<std::string>& snapshot_paths) {
  detail::writeTextDurably(series_path, xdmfOfSeries(snapshot_paths, detail::directoryOf(series_path)));
}

/// The regular files "<directory>/<prefix>*.hdf5", in name order (the samples' numbered names are
/// in time order). Not collective; a missing directory throws std::filesystem::filesystem_error.
inline std::vector<std::string> snapshotsIn(const std::string& directory, const std::string& prefix) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.starts_with(prefix) && entry.path().extension() == ".hdf5")
      paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// Collective over comm: rank 0 writes series_path over every snapshot "<prefix>*.hdf5" beside it
/// (a run's series, rewritten after each snapshot, so that a run stopped or restarted keeps one);
/// a failure is the same grove::Error on every rank.
inline void writeXdmfSeriesBeside(const Comm& comm, const std::string& series_path, const std::string& prefix) {
  std::string problem;
  if (comm.isRoot()) {
    try {
      writeXdmfSeries(series_path, snapshotsIn(detail::directoryOf(series_path), prefix));
    } catch (const Error& e) {
      problem = e.message();
    } catch (const std::exception& e) {
      problem = fmt::format("{}: {}", series_path, e.what());
    }
  }
  agreeOnRootFailure(comm, problem, "grove::io::writeXdmfSeriesBeside");
}

}  // namespace grove::io
