#pragma once
/// @file
/// HDF5 snapshots of a ParticleSystem, written by all ranks into one file (collectively, through
/// parallel HDF5) in the layout of GADGET-4 and SWIFT, which h5py and yt read (doc/io.md):
/// @verbatim
///   /Header      Time, Step, BoxSize (one length for a cube or an open box, else three),
///                NumPart_ThisFile[6], NumPart_Total[6],
///                NumPart_Total_HighWord[6], MassTable[6], NumFilesPerSnapshot, Redshift, Code
///   /Units       SWIFT's "Unit length in cgs (U_L)", "Unit mass in cgs (U_M)",
///                "Unit time in cgs (U_t)", "Unit current in cgs (U_I)", "Unit temperature in cgs (U_T)"
///   /Parameters  "Text": the parameter file the run used (SnapshotHeader::parameters)
///   /PartTypeN/<field>   one row per particle, in rank order (N: the particle type, 0 for gas)
/// @endverbatim
///
/// The user names the particle's fields once, by a static member of FP:
/// @code
///   struct Body {
///     std::int64_t id; double mass; grove::Vec3d pos, vel; ...
///     static constexpr auto snapshotFields() {
///       return std::tuple{grove::io::field("Coordinates", &Body::pos), grove::io::field("Velocities", &Body::vel),
///                         grove::io::field("Masses", &Body::mass), grove::io::field("ParticleIDs", &Body::id)};
///     }
///   };
///   grove::io::writeSnapshot("snap_000.hdf5", psys, {.time = t, .box = {1, 1, 1}});
///   grove::io::readSnapshot("snap_000.hdf5", psys);      // then decomposeDomainAll + exchangeParticle
/// @endcode
///
/// Fields may be double, float, std::int64_t, std::int32_t, grove::Vec3d or grove::Vec3f members.
/// Reading gives each rank a contiguous share of the rows (any rank count, not the writer's), and
/// sets the named fields of value-initialised FPs; the caller redistributes them by position
/// (DomainInfo::decomposeDomainAll, ParticleSystem::exchangeParticle). Collective (every rank of
/// comm). Needs grove built with HDF5 (GROVE_HAS_HDF5, grove/config.hpp), parallel or serial: with
/// the parallel library every rank writes its own rows (MPI-IO); with the serial one, at several
/// ranks, rank 0 writes them all, the others sending theirs (grove/io/rows_through_rank_zero.hpp),
/// and every rank reads on its own. Both give the same file, byte for byte in every table.
///
/// A snapshot is written as "<path>.tmp" (its layout by rank 0, then every rank its rows), synced,
/// read back by every rank against its rows' checksums, and renamed over path only then: a full
/// disk or a kill while writing leaves a file already at path as it was. A failure on any rank
/// throws the same grove::Error on every rank, naming the file and the reason. Every table carries
/// GroveChecksum (doc/io.md), which readSnapshot checks at any rank count.
///
/// Beside the snapshot, rank 0 then writes "<path without .hdf5>.xdmf" for ParaView and VisIt
/// (grove/io/xdmf.hpp; SnapshotHeader::xdmf = false writes none).
#include <bit>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "grove/comm/agree.hpp"
#include "grove/comm/comm.hpp"
#include "grove/config.hpp"
#include "grove/core/error.hpp"
#include "grove/core/vec3.hpp"
#include "grove/io/checksum.hpp"
#include "grove/io/fields.hpp"
#include "grove/io/hdf5_file.hpp"
#include "grove/io/rows_through_rank_zero.hpp"
#include "grove/io/xdmf.hpp"
#include "grove/particles/particle_system.hpp"

namespace grove::io {

/// What a snapshot records beside the particles: written by writeSnapshot, returned by
/// readSnapshot.
struct SnapshotHeader {
  double time = 0.0;       ///< /Header/Time: the simulation time
  std::int64_t step = 0;   ///< /Header/Step: the step number (0 when a file has none)
  Vec3d box{};             ///< the periodic box's lengths (0: open); /Header/BoxSize, one length for a cube
  double unit_length_cgs = 1.0,  ///< the code's unit of length in cgs (/Units U_L; 1 when a file has none)
      unit_mass_cgs = 1.0,       ///< the code's unit of mass in cgs (/Units U_M)
      unit_time_cgs = 1.0;       ///< the code's unit of time in cgs (/Units U_t)
  std::string parameters;  ///< the parameter file's text (echoed into /Parameters)
  int part_type = 0;       ///< /PartTypeN: the particles' type N, 0 to 5 (0 for gas)
  bool xdmf = true;        ///< writeSnapshot: an XDMF description beside the file (grove/io/xdmf.hpp)
};

/// Who writes a snapshot's rows. The file is the same, byte for byte in every table, either way.
enum class SnapshotWriters {
  kAuto,       ///< every rank where the HDF5 library is parallel, else rank 0
  /// every rank its own rows (MPI-IO); at several ranks needs the parallel library, else
  /// writeSnapshot throws grove::Error
  kEveryRank,
  /// rank 0 all rows, the others sending theirs; also serves where MPI-IO is slow or broken (some
  /// network file systems)
  kRankZero
};

namespace detail {

// Opens `path` into `file` on this rank; returns the problem, if any, for the caller to agree on
// (a rank that threw alone would leave the others waiting in the next collective call).
inline std::optional<std::string> openOrProblem(std::optional<Hdf5File>& file, const std::string& path,
                                                Hdf5File::Mode mode, const void* native_comm) {
  try {
    file.emplace(path, mode, native_comm);
  } catch (const Error& e) {
    return e.message();
  } catch (const std::exception& e) {
    return fmt::format("{}: {}", path, e.what());
  }
  return std::nullopt;
}

// How a member is stored: its scalar type and the scalars per particle (3 for vectors).
template <class T>
constexpr Scalar scalarOf() {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, std::int64_t> ||
                    std::is_same_v<T, std::int32_t>,
                "grove::io: a snapshot field is double, float, std::int64_t, std::int32_t or a Vec3 of them");
  if constexpr (std::is_same_v<T, double>) return Scalar::kFloat64;
  else if constexpr (std::is_same_v<T, float>) return Scalar::kFloat32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return Scalar::kInt64;
  else return Scalar::kInt32;
}
template <class M>
struct Layout {
  static constexpr Scalar type = scalarOf<M>();
  static constexpr int components = 1;
};
template <class T>
struct Layout<Vec3<T>> {
  static constexpr Scalar type = scalarOf<T>();
  static constexpr int components = 3;
  static_assert(sizeof(Vec3<T>) == 3 * sizeof(T), "grove::io: a vector field's scalars must be packed");
};
// A field's Layout (unevaluated: decltype(layoutOf(field))).
template <class FP, class M>
Layout<M> layoutOf(const Field<FP, M>&);

inline std::string partTypeGroup(int part_type) { return "/PartType" + std::to_string(part_type); }

// Whether every rank writes its own rows (else rank 0 writes all of them).
inline bool everyRankWrites(const Comm& comm, SnapshotWriters writers, const std::string& path) {
  require(writers != SnapshotWriters::kEveryRank || comm.size() == 1 || Hdf5File::parallel(),
          "grove::io::writeSnapshot", "{}: SnapshotWriters::kEveryRank at {} ranks needs the parallel HDF5 library "
          "(libhdf5-openmpi-dev); this one is serial (kAuto writes through rank 0 with it)", path, comm.size());
  if (comm.size() == 1) return true;
  return writers == SnapshotWriters::kEveryRank || (writers == SnapshotWriters::kAuto && Hdf5File::parallel());
}

// One field of every particle, packed.
template <class FP, class M>
std::vector<std::byte> columnOf(std::span<const FP> particles, const Field<FP, M>& f) {
  std::vector<std::byte> column(particles.size() * sizeof(M));
  for (std::size_t i = 0; i < particles.size(); ++i)
    std::memcpy(column.data() + i * sizeof(M), &(particles[i].*(f.member)), sizeof(M));
  return column;
}

// Every rank's particle count and first row (the particles of the ranks before it), and the total.
struct RowsOfRanks {
  std::vector<std::int64_t> counts, firsts;
  std::int64_t total = 0;
};
inline RowsOfRanks rowsOfRanks(const Comm& comm, std::int64_t count) {
  RowsOfRanks rows;
  rows.counts = comm.allgather(count);
  for (const std::int64_t c : rows.counts) {
    rows.firsts.push_back(rows.total);
    rows.total += c;
  }
  return rows;
}

// A table's checksum (the attribute GroveChecksum of every dataset grove writes): the sum, modulo
// 2^64, over rows i of a mix of i and checksum64 of row i's bytes (little-endian scalars), so that
// ranks holding disjoint runs of rows add up their parts, whatever the rank count.
constexpr const char* kChecksumAttribute = "GroveChecksum";
inline std::uint64_t rowChecksum(std::int64_t first, std::int64_t count, std::size_t row_bytes, const std::byte* rows) {
  std::uint64_t sum = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t h = checksum64(std::span(rows + static_cast<std::size_t>(i) * row_bytes, row_bytes)) +
                      static_cast<std::uint64_t>(first + i) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    sum += h ^ (h >> 31);
  }
  return sum;
}
inline std::size_t scalarBytes(Scalar s) { return s == Scalar::kFloat64 || s == Scalar::kInt64 ? 8 : 4; }

// Rank 0's part of writing a snapshot: the file with its header, units, parameters and tables
// (allocated, with their checksums), written alone before the ranks fill the tables.
template <class FP>
void writeSnapshotLayout(const std::string& path, const SnapshotHeader& header, std::int64_t total,
                         const std::vector<std::uint64_t>& checksums) {
  Hdf5File file(path, Hdf5File::Mode::kCreate, nullptr);
  std::vector<std::int64_t> this_file(6, 0), high_word(6, 0);
  this_file[static_cast<std::size_t>(header.part_type)] = total;
  file.writeAttribute("/Header", "Time", std::vector<double>{header.time});
  file.writeAttribute("/Header", "Redshift", std::vector<double>{0.0});
  file.writeAttribute("/Header", "Step", std::vector<std::int64_t>{header.step});
  // GADGET's scalar for a cube or an open box (0), which readers of GADGET files (yt) expect; a
  // box of unequal sides as SWIFT writes it, three lengths.
  const bool cube = header.box.x == header.box.y && header.box.y == header.box.z;
  file.writeAttribute("/Header", "BoxSize", cube ? std::vector<double>{header.box.x}
                                                 : std::vector<double>{header.box.x, header.box.y, header.box.z});
  file.writeAttribute("/Header", "NumPart_ThisFile", this_file);
  file.writeAttribute("/Header", "NumPart_Total", this_file);
  file.writeAttribute("/Header", "NumPart_Total_HighWord", high_word);
  file.writeAttribute("/Header", "MassTable", std::vector<double>(6, 0.0));
  file.writeAttribute("/Header", "NumFilesPerSnapshot", std::vector<std::int64_t>{1});
  file.writeAttribute("/Header", "Code", std::string("grove ") + GROVE_VERSION);
  file.writeAttribute("/Units", "Unit length in cgs (U_L)", std::vector<double>{header.unit_length_cgs});
  file.writeAttribute("/Units", "Unit mass in cgs (U_M)", std::vector<double>{header.unit_mass_cgs});
  file.writeAttribute("/Units", "Unit time in cgs (U_t)", std::vector<double>{header.unit_time_cgs});
  file.writeAttribute("/Units", "Unit current in cgs (U_I)", std::vector<double>{1.0});
  file.writeAttribute("/Units", "Unit temperature in cgs (U_T)", std::vector<double>{1.0});
  file.writeAttribute("/Parameters", "Text", header.parameters);
  const std::string group = partTypeGroup(header.part_type);
  std::size_t k = 0;
  std::apply(
      [&](const auto&... fields) {
        auto create_one = [&](const auto& f) {
          using L = decltype(layoutOf(f));
          file.createTable(group + "/" + f.name, L::type, L::components, total);
          file.writeAttribute(group + "/" + f.name, kChecksumAttribute, checksums[k++]);
        };
        (create_one(fields), ...);
      },
      FP::snapshotFields());
  if (auto problem = file.close()) throw Error("grove::io::Hdf5File", *problem);
}

}  // namespace detail

/// Collective over comm: writes every rank's `particles` into one file at `path`, in rank order,
/// with `header`; then, unless header.xdmf is false or there is no particle, rank 0 writes the
/// XDMF description beside it (grove/io/xdmf.hpp).
///
/// Needs: FP::snapshotFields() (grove/io/fields.hpp); header.part_type in 0-5; grove built with
/// HDF5. Written as "<path>.tmp", read back and checked by every rank, then renamed over path. A
/// failure on any rank throws the same grove::Error on every rank; a file already at path is then
/// left as it was (unless only the XDMF description failed: the snapshot is written then).
template <class FP>
void writeSnapshot(const std::string& path, std::span<const FP> particles, const SnapshotHeader& header,
                   const Comm& comm = Comm::world(), SnapshotWriters writers = SnapshotWriters::kAuto) {
  static_assert(HasSnapshotFields<FP>, "grove::io::writeSnapshot: FP needs `static constexpr auto snapshotFields()` "
                                       "naming its fields (grove/io/snapshot.hpp)");
  constexpr const char* stage = "grove::io::writeSnapshot";
  const bool every_rank_writes = detail::everyRankWrites(comm, writers, path);
  require(header.part_type >= 0 && header.part_type < 6, stage, "{}: particle type {} is outside GADGET's 0-5", path,
          header.part_type);
  const auto count = static_cast<std::int64_t>(particles.size());
  const detail::RowsOfRanks rows = detail::rowsOfRanks(comm, count);
  const std::int64_t total = rows.total, first = rows.firsts[static_cast<std::size_t>(comm.rank())];
  // Every field's column and this rank's part of its checksum first, agreed on by all ranks: a rank
  // that failed here (memory) must not leave the others waiting.
  std::vector<std::vector<std::byte>> columns;
  std::vector<std::uint64_t> mine;
  std::optional<std::string> problem;
  try {
    std::apply(
        [&](const auto&... fields) {
          auto pack_one = [&](const auto& f) {
            using M = std::remove_cvref_t<decltype(particles[0].*(f.member))>;
            columns.push_back(detail::columnOf(particles, f));
            mine.push_back(detail::rowChecksum(first, count, sizeof(M), columns.back().data()));
          };
          (pack_one(fields), ...);
        },
        FP::snapshotFields());
  } catch (const std::exception& e) {
    problem = fmt::format("{}: preparing this rank's {} particles failed: {}", path, count, e.what());
  }
  agreeOnFailure(comm, problem, stage);
  std::vector<std::uint64_t> checksums = mine;
  comm.allreduceSum(checksums);

  const std::string temporary = path + ".tmp";
  const void* native_comm = grove::detail::nativeComm(comm.handle());
  const std::string group = detail::partTypeGroup(header.part_type);
  auto each_field = [](auto&& call) {
    std::size_t k = 0;
    std::apply([&](const auto&... fields) { (call(fields, k++), ...); }, FP::snapshotFields());
  };
  try {
    // The layout, by rank 0 alone; then every rank its rows, every rank going on to the next
    // collective call only when all have succeeded.
    std::string root_problem;
    if (comm.isRoot()) {
      try {
        detail::writeSnapshotLayout<FP>(temporary, header, total, checksums);
      } catch (const Error& e) {
        root_problem = e.message();
      } catch (const std::exception& e) {
        root_problem = fmt::format("{}: {}", temporary, e.what());
      }
    }
    agreeOnRootFailure(comm, root_problem, stage);
    if (!every_rank_writes) {
      std::vector<detail::TableRows> tables;
      each_field([&](const auto& f, std::size_t k) {
        using L = decltype(detail::layoutOf(f));
        tables.push_back({group + "/" + f.name, L::type, L::components,
                          static_cast<std::size_t>(L::components) * detail::scalarBytes(L::type), &columns[k]});
      });
      problem = detail::writeRowsThroughRankZero(comm, temporary, tables, rows.counts, rows.firsts);
      agreeOnFailure(comm, problem, stage);
    } else {
      std::optional<Hdf5File> file;
      agreeOnFailure(comm, detail::openOrProblem(file, temporary, Hdf5File::Mode::kWrite, native_comm), stage);
      each_field([&](const auto& f, std::size_t k) {
        using L = decltype(detail::layoutOf(f));
        // Called for every field even after a failure, so that every rank makes the same calls.
        auto p = file->writeRows(group + "/" + f.name, L::type, L::components, first, count, columns[k].data());
        if (!problem) problem = std::move(p);
      });
      agreeOnFailure(comm, problem, stage);
      agreeOnFailure(comm, file->flush(), stage);
      agreeOnFailure(comm, file->close(), stage);
    }
    // Read back, each rank its own rows against its part of the checksums (with the serial
    // library every rank opens the file alone, for reading only).
    {
      std::optional<Hdf5File> file;
      agreeOnFailure(comm, detail::openOrProblem(file, temporary, Hdf5File::Mode::kRead, native_comm), stage);
      std::vector<std::byte> back;
      each_field([&](const auto& f, std::size_t k) {
        using L = decltype(detail::layoutOf(f));
        back.resize(columns[k].size());
        auto p = file->readRows(group + "/" + f.name, L::type, L::components, first, count, back.data());
        if (!p && back != columns[k])
          p = fmt::format("{}: rows [{}, {}) of {} read back unlike those written", temporary, first, first + count,
                          group + "/" + f.name);
        if (!problem) problem = std::move(p);
      });
      agreeOnFailure(comm, problem, stage);
      agreeOnFailure(comm, file->close(), stage);
    }
    if (comm.isRoot())
      if (auto p = detail::renameDurably(temporary, path)) root_problem = *p;
    agreeOnRootFailure(comm, root_problem, stage);
  } catch (const Error& e) {
    detail::removeUnpublished(comm, temporary);  // every failure above was agreed: every rank is here
    throw Error(stage, fmt::format("snapshot {} not written (a file of that name is left as it was): {}", path,
                                   e.message()));
  }
  // Its XDMF description beside it, for ParaView and VisIt, made by rank 0 from the complete file
  // (a snapshot of no particle has none: XDMF has no grid of no point).
  if (header.xdmf && total > 0) {
    std::string root_problem;
    if (comm.isRoot()) {
      try {
        writeXdmf(path);
      } catch (const Error& e) {
        root_problem = e.message();
      } catch (const std::exception& e) {
        root_problem = e.what();
      }
    }
    if (!root_problem.empty()) root_problem = fmt::format("snapshot {} written, its XDMF description not: {}", path,
                                                          root_problem);
    agreeOnRootFailure(comm, root_problem, stage);
  }
}

/// Collective over psys.comm(): writeSnapshot of psys's particles over the particle system's own
/// communicator.
template <class FP>
void writeSnapshot(const std::string& path, const ParticleSystem<FP>& psys, const SnapshotHeader& header,
                   SnapshotWriters writers = SnapshotWriters::kAuto) {
  writeSnapshot(path, psys.particles(), header, psys.comm(), writers);
}

/// Collective over comm: reads a snapshot's particles of type `part_type` into psys (replacing
/// its particles): each rank gets a contiguous share of the rows, whatever the rank count that
/// wrote it (rank r: rows [total*r/p, total*(r+1)/p)), with the fields of FP::snapshotFields() set
/// and the others value-initialised. Returns the header (part_type as asked; time, step, box,
/// parameters and units as the file holds them). Redistribute by position afterwards
/// (DomainInfo::decomposeDomainAll, ParticleSystem::exchangeParticle).
///
/// Throws grove::Error when the file cannot be opened, lacks /Header's Time, BoxSize or
/// NumPart_Total, has no such particle type, lacks a field's table or holds one of another shape,
/// or when a table's GroveChecksum does not match its rows (checked where present); psys is then
/// unchanged.
template <class FP>
SnapshotHeader readSnapshot(const std::string& path, ParticleSystem<FP>& psys, const Comm& comm, int part_type = 0) {
  static_assert(HasSnapshotFields<FP>, "grove::io::readSnapshot: FP needs `static constexpr auto snapshotFields()` "
                                       "naming its fields (grove/io/snapshot.hpp)");
  const Hdf5File file(path, Hdf5File::Mode::kRead, grove::detail::nativeComm(comm.handle()));
  SnapshotHeader header;
  header.part_type = part_type;
  header.time = file.readDoubles("/Header", "Time").at(0);
  header.step = file.hasAttribute("/Header", "Step") ? file.readIntegers("/Header", "Step").at(0) : 0;
  const std::vector<double> box = file.readDoubles("/Header", "BoxSize");
  if (box.size() == 3) header.box = {box[0], box[1], box[2]};
  else if (box.size() == 1) header.box = {box[0], box[0], box[0]};
  if (file.hasAttribute("/Parameters", "Text")) header.parameters = file.readText("/Parameters", "Text");
  if (file.hasAttribute("/Units", "Unit length in cgs (U_L)")) {
    header.unit_length_cgs = file.readDoubles("/Units", "Unit length in cgs (U_L)").at(0);
    header.unit_mass_cgs = file.readDoubles("/Units", "Unit mass in cgs (U_M)").at(0);
    header.unit_time_cgs = file.readDoubles("/Units", "Unit time in cgs (U_t)").at(0);
  }
  const std::vector<std::int64_t> totals = file.readIntegers("/Header", "NumPart_Total");
  require(part_type >= 0 && static_cast<std::size_t>(part_type) < totals.size(), "grove::io::readSnapshot",
          "{} has no particle type {}", path, part_type);
  const std::int64_t total = totals[static_cast<std::size_t>(part_type)];
  require(total >= 0, "grove::io::readSnapshot", "{}: NumPart_Total says {} particles of type {}", path, total,
          part_type);
  const std::int64_t ranks = comm.size(), me = comm.rank();
  const std::int64_t first = total * me / ranks, count = total * (me + 1) / ranks - first;

  std::vector<FP> particles(static_cast<std::size_t>(count), FP{});
  const std::string group = detail::partTypeGroup(part_type);
  std::apply(
      [&](const auto&... fields) {
        auto read_one = [&](const auto& f) {
          using M = std::remove_cvref_t<decltype(particles[0].*(f.member))>;
          using L = detail::Layout<M>;
          const std::string name = group + "/" + f.name;
          require(file.hasDataset(name), "grove::io::readSnapshot", "{} has no dataset {} (a field of the particle "
                  "type: written by another program, or another particle type?)", path, name);
          const DatasetShape s = file.shape(name);
          require(s.rows == total && s.components == L::components, "grove::io::readSnapshot",
                  "{}: dataset {} holds {} rows of {} (the header says {} particles; the field has {} components)",
                  path, name, s.rows, s.components, total, L::components);
          std::vector<M> column(static_cast<std::size_t>(count));
          agreeOnFailure(comm, file.readRows(name, L::type, L::components, first, count, column.data()),
                         "grove::io::readSnapshot");
          // GroveChecksum (files of other programs have none): this rank's rows as the file holds
          // them, read again in the file's type when the field's differs.
          if (file.hasAttribute(name, detail::kChecksumAttribute) && std::endian::native == std::endian::little &&
              s.type) {
            std::vector<std::byte> stored;
            if (*s.type == L::type) {
              stored.resize(column.size() * sizeof(M));
              std::memcpy(stored.data(), column.data(), stored.size());
            } else {
              stored.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(L::components) *
                            detail::scalarBytes(*s.type));
              agreeOnFailure(comm, file.readRows(name, *s.type, L::components, first, count, stored.data()),
                             "grove::io::readSnapshot");
            }
            const std::size_t row_bytes = static_cast<std::size_t>(L::components) * detail::scalarBytes(*s.type);
            const std::uint64_t sum = comm.allreduceSum(detail::rowChecksum(first, count, row_bytes, stored.data()));
            require(sum == file.readUnsigned(name, detail::kChecksumAttribute), "grove::io::readSnapshot",
                    "{}: dataset {} is damaged (its rows do not match its {})", path, name, detail::kChecksumAttribute);
          }
          for (std::size_t i = 0; i < column.size(); ++i) particles[i].*(f.member) = column[i];
        };
        (read_one(fields), ...);
      },
      FP::snapshotFields());
  psys.setNumberOfParticleLocal(0);
  psys.add(std::span<const FP>(particles));
  return header;
}
/// Collective over psys.comm(): readSnapshot over the particle system's own communicator (as
/// writeSnapshot's ParticleSystem form).
template <class FP>
SnapshotHeader readSnapshot(const std::string& path, ParticleSystem<FP>& psys, int part_type = 0) {
  return readSnapshot(path, psys, psys.comm(), part_type);
}

}  // namespace grove::io
