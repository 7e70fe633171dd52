// grove::io's HDF5 snapshots (grove/io/snapshot.hpp) at 1-4 ranks: every rank's particles written
// into one file and read back, by ids and fields bitwise; written by 3 ranks and read by 2 (a
// file does not remember its writers); the header's attributes; every rank with its share after
// the read and a redistribution by position; missing and foreign files refused with the file
// named; a write failing on one rank (a full disk, through GROVE_FAULT_INJECT) or in HDF5 is the
// same error on every rank and leaves a file already at that path as it was; a damaged table is
// refused by its checksum. With a serial HDF5 library rank 0 writes every rank's rows (the others
// send theirs), and every test runs as with the parallel one; rows written through rank 0 are the
// same tables, byte for byte, as rows written by every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/fault_injection.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/io/checksum.hpp"
#include "grove/io/snapshot.hpp"
#include "grove/io/xdmf.hpp"
#include "grove/particles/particle_system.hpp"
#include "support/errors.hpp"

namespace {

struct Star {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos, vel;
  float metallicity = 0.0f;
  std::int32_t flags = 0;
  double not_written = 0.0;  // a member without a field: read back as the value-initialised 0

  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
  static constexpr auto snapshotFields() {
    return std::tuple{grove::io::field("Coordinates", &Star::pos), grove::io::field("Velocities", &Star::vel),
                      grove::io::field("Masses", &Star::mass), grove::io::field("ParticleIDs", &Star::id),
                      grove::io::field("Metallicity", &Star::metallicity), grove::io::field("Flags", &Star::flags)};
  }
};

// A star of id k, the same on every rank (values that round-trip only if nothing is converted).
Star starOf(std::int64_t k) {
  Star s;
  s.id = k;
  s.mass = 1.0 / (3.0 + static_cast<double>(k));
  s.pos = {std::sin(0.37 * k), std::cos(0.11 * k), 1e-3 * static_cast<double>(k % 101)};
  s.vel = {1.0 / (1.0 + k), -0.5 * k, 1e300 / (1.0 + k)};
  s.metallicity = 0.02f / (1.0f + static_cast<float>(k % 7));
  s.flags = static_cast<std::int32_t>(k % 5) - 2;
  s.not_written = 42.0;
  return s;
}

// Rank r of `comm` holds ids r, r + P, ... below n, except that rank 1 holds none when there
// are more than two ranks (a rank without particles takes part in the collective writes).
grove::ParticleSystem<Star> myStars(const grove::Comm& comm, std::int64_t n) {
  grove::ParticleSystem<Star> psys;
  if (comm.size() > 2 && comm.rank() == 1) return psys;
  for (std::int64_t k = comm.rank(); k < n; k += comm.size()) psys.add(starOf(k));
  return psys;
}
std::int64_t expectedCount(const grove::Comm& comm, std::int64_t n) {
  std::int64_t count = 0;
  for (int r = 0; r < comm.size(); ++r)
    if (!(comm.size() > 2 && r == 1)) count += (n - r + comm.size() - 1) / comm.size();
  return count;
}

// One file per test and rank count (the suites of several rank counts may run at once); the
// ranks of one machine share TempDir.
std::string sharedPath(const grove::Comm& comm, const std::string& name) {
  return ::testing::TempDir() + "grove_" + name + "_np" + std::to_string(comm.size()) + ".hdf5";
}

// Fields of a read star unlike starOf(id) (counted, not asserted: every rank must reach the
// collective calls after the loop).
int unlikeWritten(const Star& s) {
  const Star want = starOf(s.id);
  return (s.mass != want.mass) + (s.pos != want.pos) + (s.vel != want.vel) + (s.metallicity != want.metallicity) +
         (s.flags != want.flags) + (s.not_written != 0.0);
}

}  // namespace

TEST(Hdf5Snapshot, RoundTripKeepsEveryParticleAndField) {
  const grove::Comm comm = grove::Comm::world();
  const std::int64_t n = 1003;
  const auto written = myStars(comm, n);
  const std::string path = sharedPath(comm, "round_trip");
  grove::io::SnapshotHeader header;
  header.time = 0.125;
  header.step = 17;
  header.box = {1.0, 2.0, 0.0};
  header.unit_length_cgs = 3.085678e21;
  header.parameters = "n = 1003\ntheta = 0.5\n";
  grove::io::writeSnapshot(path, written.particles(), header, comm);

  grove::ParticleSystem<Star> read;
  const grove::io::SnapshotHeader got = grove::io::readSnapshot(path, read, comm);
  EXPECT_EQ(got.time, 0.125);
  EXPECT_EQ(got.step, 17);
  EXPECT_EQ(got.box, header.box);
  EXPECT_EQ(got.unit_length_cgs, header.unit_length_cgs);
  EXPECT_EQ(got.parameters, header.parameters);
  // A contiguous share of the rows per rank, in rank order: the shares add up to every particle.
  const std::int64_t total = expectedCount(comm, n);
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(read.size())), total);
  const std::int64_t me = comm.rank(), ranks = comm.size();
  EXPECT_EQ(static_cast<std::int64_t>(read.size()), total * (me + 1) / ranks - total * me / ranks);

  std::vector<std::int64_t> ids;
  int unlike = 0;
  for (const Star& s : read) {
    unlike += unlikeWritten(s);
    ids.push_back(s.id);
  }
  EXPECT_EQ(unlike, 0) << "fields read unlike those written (a member without a field must read as 0)";
  std::vector<std::int64_t> all_read = comm.allgatherv(std::span<const std::int64_t>(ids));
  std::vector<std::int64_t> all_written;
  for (const Star& s : written) all_written.push_back(s.id);
  all_written = comm.allgatherv(std::span<const std::int64_t>(all_written));
  // Rows are in rank order, each rank's particles in its order.
  EXPECT_EQ(all_read, all_written);

  // Redistributed by position, every rank owns what its domain holds.
  grove::DomainInfo dinfo;
  dinfo.decomposeDomainAll(read);
  read.exchangeParticle(dinfo);
  int outside = 0;
  for (const Star& s : read) outside += dinfo.getPosDomain(comm.rank()).contains(s.pos) ? 0 : 1;
  EXPECT_EQ(outside, 0);
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(read.size())), total);
}

// A cube's (or an open box's) size is GADGET's one length, which yt's GADGET reader needs; a box of
// unequal sides keeps three (the round trip above). Both read back as three lengths.
TEST(Hdf5Snapshot, ACubicBoxIsOneLength) {
  const grove::Comm comm = grove::Comm::world();
  const auto written = myStars(comm, 100);
  for (const double side : {2.5, 0.0}) {
    const std::string path = sharedPath(comm, side > 0 ? "cube" : "open");
    grove::io::SnapshotHeader header;
    header.box = {side, side, side};
    grove::io::writeSnapshot(path, written.particles(), header, comm);
    {
      const grove::io::Hdf5File file(path, grove::io::Hdf5File::Mode::kRead,
                                     grove::detail::nativeComm(comm.handle()));
      EXPECT_EQ(file.readDoubles("/Header", "BoxSize"), std::vector<double>{side});
    }
    grove::ParticleSystem<Star> read;
    EXPECT_EQ(grove::io::readSnapshot(path, read, comm).box, grove::Vec3d(side, side, side));
  }
}

TEST(Hdf5Snapshot, WrittenByThreeRanksReadByTwo) {
  const grove::Comm world = grove::Comm::world();
  if (world.size() < 3) GTEST_SKIP() << "needs 3 ranks (the suite runs at 1-4)";
  const std::string path = sharedPath(world, "three_two");
  const std::int64_t n = 777;
  std::vector<std::int64_t> written_ids;
  {
    const grove::Comm writers = world.split(world.rank() < 3 ? 0 : 1, world.rank());
    if (world.rank() < 3) {
      const auto stars = myStars(writers, n);  // the writers' rank 1 holds none
      grove::io::writeSnapshot(path, stars.particles(), {.time = 2.5}, writers);
      for (const Star& s : stars) written_ids.push_back(s.id);
    }
  }
  written_ids = world.allgatherv(std::span<const std::int64_t>(written_ids));
  std::sort(written_ids.begin(), written_ids.end());
  world.barrier();
  const grove::Comm readers = world.split(world.rank() < 2 ? 0 : 1, world.rank());
  std::vector<std::int64_t> read_ids;
  if (world.rank() < 2) {
    grove::ParticleSystem<Star> read;
    EXPECT_EQ(grove::io::readSnapshot(path, read, readers).time, 2.5);
    int unlike = 0;
    for (const Star& s : read) {
      unlike += unlikeWritten(s);
      read_ids.push_back(s.id);
    }
    EXPECT_EQ(unlike, 0) << "fields read by 2 ranks unlike those 3 wrote";
  }
  read_ids = world.allgatherv(std::span<const std::int64_t>(read_ids));
  std::sort(read_ids.begin(), read_ids.end());
  EXPECT_EQ(read_ids, written_ids);
  std::size_t expected = 0;  // the writers' rank 1 held none
  for (std::int64_t k = 0; k < n; ++k) expected += k % 3 != 1 ? 1 : 0;
  EXPECT_EQ(written_ids.size(), expected);
}

TEST(Hdf5Snapshot, MissingAndForeignFilesAreRefusedWithTheirName) {
  const grove::Comm comm = grove::Comm::world();
  grove::ParticleSystem<Star> read;
  read.add(starOf(7));  // a failed read must leave what was there
  const std::string missing = ::testing::TempDir() + "grove_no_such_snapshot.hdf5";
  try {
    grove::io::readSnapshot(missing, read, comm);
    ADD_FAILURE() << "a missing file was read";
  } catch (const grove::Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  std::string text = sharedPath(comm, "foreign");
  if (comm.isRoot()) std::ofstream(text) << "not an HDF5 file\n";
  comm.barrier();
  try {
    grove::io::readSnapshot(text, read, comm);
    ADD_FAILURE() << "a text file was read";
  } catch (const grove::Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
  ASSERT_EQ(read.size(), 1u) << "a failed read changed the particles";
  EXPECT_EQ(read[0].id, 7);
}

namespace {

// A star type naming a field HDF5 cannot create (an empty name): the write fails in the middle,
// after the file was created, on every rank.
struct BadStar {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos;
  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
  static constexpr auto snapshotFields() {
    return std::tuple{grove::io::field("ParticleIDs", &BadStar::id), grove::io::field("", &BadStar::mass)};
  }
};

using grove::testing_support::errorOf;

// The message without its "grove error on rank R in " (which names the rank that threw it), and
// whether every rank holds the same one.
bool sameOnEveryRank(const grove::Comm& comm, const std::string& message) {
  const std::string text = message.substr(std::min(message.find(" in "), message.size()));
  const std::uint64_t sum = grove::io::detail::checksum64(std::as_bytes(std::span(text.data(), text.size())));
  return comm.allreduceMin(sum) == comm.allreduceMax(sum);
}

// Whether the snapshot at path still holds what myStars wrote at `time` (read by every rank).
bool holdsTheFirstSnapshot(const grove::Comm& comm, const std::string& path, double time, std::int64_t n) {
  grove::ParticleSystem<Star> read;
  const grove::io::SnapshotHeader header = grove::io::readSnapshot(path, read, comm);
  int unlike = 0;
  for (const Star& s : read) unlike += unlikeWritten(s);
  return header.time == time && comm.allreduceSum(unlike) == 0 &&
         comm.allreduceSum(static_cast<std::int64_t>(read.size())) == expectedCount(comm, n);
}

bool temporaryLeft(const std::string& path) { return std::filesystem::exists(path + ".tmp"); }

}  // namespace

// Issue 29, item 8: a snapshot is written under a temporary name and renamed when complete, so a
// write that fails after the file was created (a field HDF5 refuses) leaves the file already at
// that path as it was; every rank throws the same error.
TEST(Hdf5Snapshot, AFailedWriteLeavesTheFileThereAsItWas) {
  const grove::Comm comm = grove::Comm::world();
  const std::string path = sharedPath(comm, "kept");
  const std::int64_t n = 300;
  const auto stars = myStars(comm, n);
  grove::io::writeSnapshot(path, stars.particles(), {.time = 1.5}, comm);

  grove::ParticleSystem<BadStar> bad;
  bad.add(BadStar{comm.rank(), 1.0, {}});
  const std::string message =
      errorOf([&] { grove::io::writeSnapshot(path, std::as_const(bad).particles(), {.time = 9.0}, comm); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_TRUE(sameOnEveryRank(comm, message)) << message;
  EXPECT_TRUE(holdsTheFirstSnapshot(comm, path, 1.5, n)) << "the failed write changed " << path;
  EXPECT_FALSE(temporaryLeft(path));
}

// Issue 29, item 1: a full disk on one rank (ENOSPC from GROVE_FAULT_INJECT: rank 0's layout, its
// second table's rows, the last rank's first rows) is the same error on every rank, naming the
// file and the system's reason; nobody waits in HDF5's collective calls, the file at that path is
// kept, and no temporary is left.
TEST(Hdf5Snapshot, AFullDiskOnOneRankFailsEveryRankAndKeepsTheFile) {
  const grove::Comm comm = grove::Comm::world();
  const std::string path = sharedPath(comm, "full_disk");
  const std::int64_t n = 300;
  const auto stars = myStars(comm, n);
  grove::io::writeSnapshot(path, stars.particles(), {.time = 1.5}, comm);
  // The last rank's first rows: its own first write where every rank writes; rank 0's write of them
  // where rank 0 writes for all (after the layout and the tables of the ranks before).
  const bool every_rank_writes = comm.size() == 1 || grove::io::Hdf5File::parallel();
  constexpr int kTables = std::tuple_size_v<decltype(Star::snapshotFields())>;
  const std::string last_rank_rows = every_rank_writes ? fmt::format("enospc:1@{}", comm.size() - 1)
                                                       : fmt::format("enospc:{}@0", 2 + (comm.size() - 1) * kTables);
  for (const std::string& setting : {std::string("enospc:1@0"), std::string("enospc:3@0"), last_rank_rows}) {
    std::string message;
    grove::detail::setFaultInjection(setting.c_str());
    message = errorOf([&] { grove::io::writeSnapshot(path, stars.particles(), {.time = 9.0}, comm); });
    grove::detail::setFaultInjection(nullptr);
    ASSERT_FALSE(message.empty()) << setting << ": the write did not fail";
    EXPECT_NE(message.find(path + ".tmp"), std::string::npos) << message;
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_TRUE(sameOnEveryRank(comm, message)) << setting << ": " << message;
    EXPECT_TRUE(holdsTheFirstSnapshot(comm, path, 1.5, n)) << setting << " changed " << path;
    EXPECT_FALSE(temporaryLeft(path)) << setting;
  }
}

// Issue 29, item 8: every table carries GroveChecksum; one flipped bit in a velocity is refused by
// readSnapshot on every rank, naming the file and the table, and the particles stay as they were.
TEST(Hdf5Snapshot, ADamagedTableIsRefusedByItsChecksum) {
  const grove::Comm comm = grove::Comm::world();
  const std::string path = sharedPath(comm, "damaged");
  const auto stars = myStars(comm, 200);
  grove::io::writeSnapshot(path, stars.particles(), {.time = 0.5}, comm);
  {
    const grove::io::Hdf5File file(path, grove::io::Hdf5File::Mode::kRead, grove::detail::nativeComm(comm.handle()));
    for (const char* table : {"Coordinates", "Velocities", "Masses", "ParticleIDs", "Metallicity", "Flags"})
      EXPECT_TRUE(file.hasAttribute(std::string("/PartType0/") + table, "GroveChecksum")) << table;
  }
  // Star 0's vel.z, 1e300, is held once in the file: flip a bit of its exponent.
  if (comm.isRoot()) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const double value = starOf(0).vel.z;
    const std::size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&value), sizeof value));
    ASSERT_NE(at, std::string::npos);
    ASSERT_EQ(bytes.find(std::string(reinterpret_cast<const char*>(&value), sizeof value), at + 1), std::string::npos);
    f.seekp(static_cast<std::streamoff>(at + 7));
    f.put(static_cast<char>(bytes[at + 7] ^ 0x10));
  }
  comm.barrier();
  grove::ParticleSystem<Star> read;
  read.add(starOf(7));
  const std::string message = errorOf([&] { grove::io::readSnapshot(path, read, comm); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("/PartType0/Velocities is damaged"), std::string::npos) << message;
  EXPECT_TRUE(sameOnEveryRank(comm, message)) << message;
  ASSERT_EQ(read.size(), 1u) << "a refused read changed the particles";
  EXPECT_EQ(read[0].id, 7);
}

namespace {

// Every table of the snapshot at path, as the file holds its bytes, and its GroveChecksum (read by
// this process alone).
std::vector<std::pair<std::vector<std::byte>, std::uint64_t>> tablesOf(const std::string& path) {
  const grove::io::Hdf5File file(path, grove::io::Hdf5File::Mode::kRead, nullptr);
  std::vector<std::pair<std::vector<std::byte>, std::uint64_t>> tables;
  for (const char* name : {"Coordinates", "Velocities", "Masses", "ParticleIDs", "Metallicity", "Flags"}) {
    const std::string dataset = std::string("/PartType0/") + name;
    const grove::io::DatasetShape shape = file.shape(dataset);
    std::vector<std::byte> bytes(static_cast<std::size_t>(shape.rows * shape.components) *
                                 grove::io::detail::scalarBytes(shape.type.value()));
    EXPECT_EQ(file.readRows(dataset, *shape.type, shape.components, 0, shape.rows, bytes.data()), std::nullopt);
    tables.emplace_back(std::move(bytes), file.readUnsigned(dataset, "GroveChecksum"));
  }
  return tables;
}

}  // namespace

// Issue 34, item 3: rank 0 writing every rank's rows (as with a serial HDF5 library), in pieces of
// a few rows so that every rank's rows cross piece borders, gives every particle back bitwise, in
// rank order, and the same tables, byte for byte, as every rank writing its own (where the library
// is parallel; with the serial one, asking for that is refused by name).
TEST(Hdf5Snapshot, RowsWrittenThroughRankZeroAreThoseOfEveryRank) {
  const grove::Comm comm = grove::Comm::world();
  const std::int64_t n = 1003;
  const auto stars = myStars(comm, n);
  const std::string through_zero = sharedPath(comm, "through_rank_zero");
  const std::size_t piece_bytes = grove::io::detail::rowPieceBytes();
  grove::io::detail::rowPieceBytes() = 100;  // 4 rows of coordinates, 12 of masses, 25 of flags
  grove::io::writeSnapshot(through_zero, stars.particles(), {.time = 0.75}, comm,
                           grove::io::SnapshotWriters::kRankZero);
  grove::io::detail::rowPieceBytes() = piece_bytes;
  EXPECT_TRUE(holdsTheFirstSnapshot(comm, through_zero, 0.75, n));
  grove::ParticleSystem<Star> read;
  grove::io::readSnapshot(through_zero, read, comm);
  std::vector<std::int64_t> ids, written_ids;
  for (const Star& s : read) ids.push_back(s.id);
  for (const Star& s : stars) written_ids.push_back(s.id);
  EXPECT_EQ(comm.allgatherv(std::span<const std::int64_t>(ids)),
            comm.allgatherv(std::span<const std::int64_t>(written_ids)))
      << "rows out of rank order";
  if (comm.size() > 1 && !grove::io::Hdf5File::parallel()) {
    const std::string message = errorOf([&] {
      grove::io::writeSnapshot(through_zero, stars.particles(), {}, comm, grove::io::SnapshotWriters::kEveryRank);
    });
    EXPECT_NE(message.find("needs the parallel HDF5 library"), std::string::npos) << message;
    return;
  }
  const std::string by_every_rank = sharedPath(comm, "by_every_rank");
  grove::io::writeSnapshot(by_every_rank, stars.particles(), {.time = 0.75}, comm,
                           grove::io::SnapshotWriters::kEveryRank);
  if (comm.isRoot()) {
    const auto a = tablesOf(through_zero), b = tablesOf(by_every_rank);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].first, b[k].first) << "table " << k << " differs";
      EXPECT_EQ(a[k].second, b[k].second) << "table " << k << "'s checksum differs";
    }
  }
  comm.barrier();
}

namespace {

std::string textOf(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// Issue 34, item 1: writeSnapshot writes an XDMF description beside the snapshot: the coordinates as
// the points of one Polyvertex grid, every other table an attribute of the points with its width
// and type, at the snapshot's time; writeXdmfSeries puts several snapshots, from another directory,
// in one temporal collection; a missing snapshot is refused by name, and xdmf = false writes none.
TEST(Hdf5Snapshot, XdmfBesideTheSnapshotNamesEveryTable) {
  const grove::Comm comm = grove::Comm::world();
  const std::int64_t n = 500;
  const auto stars = myStars(comm, n);
  const std::int64_t total = expectedCount(comm, n);
  const std::string first = sharedPath(comm, "xdmf_a"), second = sharedPath(comm, "xdmf_b");
  const std::string first_name = std::filesystem::path(first).filename().string();
  grove::io::writeSnapshot(first, stars.particles(), {.time = 0.25, .part_type = 1}, comm);
  grove::io::writeSnapshot(second, stars.particles(), {.time = 0.5, .part_type = 1}, comm);
  if (comm.isRoot()) {
    const std::string xdmf = textOf(grove::io::xdmfPathOf(first));
    EXPECT_EQ(grove::io::xdmfPathOf(first), first.substr(0, first.size() - 5) + ".xdmf");
    EXPECT_EQ(occurrences(xdmf, "<Grid "), 1u) << xdmf;
    EXPECT_NE(xdmf.find("<Time Value=\"0.25\"/>"), std::string::npos) << xdmf;
    EXPECT_NE(xdmf.find(fmt::format("<Topology TopologyType=\"Polyvertex\" NumberOfElements=\"{}\"", total)),
              std::string::npos)
        << xdmf;
    const auto item = [&](const char* table, const std::string& dims, const char* type, int precision) {
      return fmt::format("<DataItem Dimensions=\"{}\" NumberType=\"{}\" Precision=\"{}\" Format=\"HDF\">{}:/PartType1/{}"
                         "</DataItem>",
                         dims, type, precision, first_name, table);
    };
    const std::string vectors = fmt::format("{} 3", total), scalars = fmt::format("{}", total);
    EXPECT_NE(xdmf.find("<Geometry GeometryType=\"XYZ\">\n        " + item("Coordinates", vectors, "Float", 8)),
              std::string::npos)
        << xdmf;
    for (const auto& [table, dims, type, precision, kind] :
         {std::tuple{"Velocities", vectors, "Float", 8, "Vector"}, std::tuple{"Masses", scalars, "Float", 8, "Scalar"},
          std::tuple{"ParticleIDs", scalars, "Int", 8, "Scalar"}, std::tuple{"Metallicity", scalars, "Float", 4, "Scalar"},
          std::tuple{"Flags", scalars, "Int", 4, "Scalar"}}) {
      EXPECT_NE(xdmf.find(fmt::format("<Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"Node\">\n        {}", table,
                                      kind, item(table, dims, type, precision))),
                std::string::npos)
          << table << " in\n"
          << xdmf;
    }
    EXPECT_EQ(occurrences(xdmf, "<Attribute "), 5u) << "Coordinates are the points, not an attribute";

    // The series in a directory of its own: the data named from there.
    const std::string dir = ::testing::TempDir() + "grove_xdmf_series_np" + std::to_string(comm.size());
    std::filesystem::create_directories(dir);
    grove::io::writeXdmfSeries(dir + "/series.xdmf", {first, second});
    const std::string series = textOf(dir + "/series.xdmf");
    EXPECT_NE(series.find("<Grid Name=\"TimeSeries\" GridType=\"Collection\" CollectionType=\"Temporal\">"),
              std::string::npos);
    EXPECT_EQ(occurrences(series, "<Grid Name=\"PartType1\""), 2u) << series;
    EXPECT_LT(series.find("<Time Value=\"0.25\"/>"), series.find("<Time Value=\"0.5\"/>")) << series;
    EXPECT_NE(series.find(">../" + first_name + ":/PartType1/Coordinates<"), std::string::npos) << series;
    EXPECT_FALSE(std::filesystem::exists(dir + "/series.xdmf.tmp"));
    const std::string missing = dir + "/no_such_snapshot.hdf5";
    const std::string message = errorOf([&] { grove::io::writeXdmfSeries(dir + "/bad.xdmf", {first, missing}); });
    EXPECT_NE(message.find(missing), std::string::npos) << message;
    EXPECT_FALSE(std::filesystem::exists(dir + "/bad.xdmf"));
  }
  const std::string plain = sharedPath(comm, "no_xdmf");
  if (comm.isRoot()) std::filesystem::remove(grove::io::xdmfPathOf(plain));  // one left by an earlier run
  comm.barrier();
  grove::io::writeSnapshot(plain, stars.particles(), {.time = 1.0, .xdmf = false}, comm);
  if (comm.isRoot()) EXPECT_FALSE(std::filesystem::exists(grove::io::xdmfPathOf(plain)));
  comm.barrier();
}
