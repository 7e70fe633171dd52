// grove::io::Checkpoint (grove/io/checkpoint.hpp) at 1-4 ranks:
// - a run stopped after step k and restarted from its checkpoint reaches step 2k with bitwise the
//   particles, in the same order on every rank, of the run that never stopped (a drift with a
//   per-rank random kick, decomposition blended with coef_ema, exchange every step);
// - values, per-rank values and the decomposition come back exactly;
// - at another rank count every particle comes back once, the values too, while the domain and the
//   per-rank values are left as they were;
// - only the newest `keep` checkpoints stay, no temporary file is left, restoreLatest falls back
//   past a damaged newest one;
// - missing, foreign, truncated, damaged and mismatched files are refused with the file named and
//   nothing changed; values that differ between ranks are refused when writing;
// - a write failing on one rank (a full disk, through GROVE_FAULT_INJECT) is the same error on every
//   rank and keeps the checkpoints before it; a damaged block is refused at another rank count too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/fault_injection.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/io/checkpoint.hpp"
#include "grove/particles/particle_system.hpp"
#include "support/errors.hpp"

namespace {

struct Grain {
  std::int64_t id = 0;
  grove::Vec3d pos, vel;
  double mass = 0.0;

  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
};
struct OtherGrain {  // another type of the same size: refused by name
  std::int64_t id = 0;
  grove::Vec3d pos, vel;
  double charge = 0.0;
  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
};

bool sameBits(const Grain& a, const Grain& b) { return std::memcmp(&a, &b, sizeof(Grain)) == 0; }

// n grains in a clumpy cube, the same set on every rank count, dealt out round-robin; rank 1
// holds none when there are more than two ranks (an empty rank writes an empty block).
void addGrains(grove::ParticleSystem<Grain>& psys, std::int64_t n) {
  const grove::Comm& comm = psys.comm();
  if (comm.size() > 2 && comm.rank() == 1) return;
  for (std::int64_t k = comm.rank(); k < n; k += comm.size()) {
    Grain g;
    g.id = k;
    const double t = 0.61803398875 * static_cast<double>(k);
    g.pos = {std::fmod(t, 1.0), std::fmod(t * t, 1.0) * 0.5, std::fmod(std::sqrt(t + 1.0), 1.0) * 0.25};
    g.vel = {std::sin(t), std::cos(3.0 * t), 0.1 * std::sin(7.0 * t)};
    g.mass = 1.0 / static_cast<double>(n);
    psys.add(g);
  }
}

// Everything a run carries from step to step.
struct DriftRun {
  grove::ParticleSystem<Grain> grains;
  grove::DomainInfo dinfo;
  std::mt19937_64 kicks;  // each rank its own stream
  double time = 0.0;
  std::int64_t step = 0;

  DriftRun(const grove::Comm& comm, std::int64_t n) : grains(comm), dinfo(comm), kicks(1234 + comm.rank()) {
    addGrains(grains, n);
    dinfo.initialize(0.5);  // blends each cut with the last: the restored cuts matter
    dinfo.decomposeDomainAll(grains);
    grains.exchangeParticle(dinfo);
  }
  // Drift, a random kick per particle from this rank's stream, then decomposition and exchange:
  // every piece of state the checkpoint saves changes the next step.
  void advance(int steps) {
    const double dt = 1.0 / 64.0;
    std::uniform_real_distribution<double> kick(-0.05, 0.05);
    for (int s = 0; s < steps; ++s) {
      for (Grain& g : grains) {
        g.vel += grove::Vec3d{kick(kicks), kick(kicks), kick(kicks)};
        g.pos += dt * g.vel;
      }
      time += dt;
      ++step;
      dinfo.decomposeDomainAll(grains);
      grains.exchangeParticle(dinfo);
    }
  }
  grove::io::Checkpoint checkpointAt(const std::string& prefix) {
    grove::io::Checkpoint c(prefix, grains.comm());
    c.particles("grains", grains).domain("domain", dinfo).value("time", time).value("step", step);
    c.perRankValue("kicks", kicks);
    return c;
  }
};

// One directory per test and rank count (the suites of several rank counts may run at once),
// emptied by rank 0 before the ranks use it.
std::string freshPrefix(const grove::Comm& comm, const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("grove_checkpoint_" + name + "_np" + std::to_string(comm.size()));
  if (comm.isRoot()) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  comm.barrier();
  return (dir / "restart").string();
}

// Ranks whose particles differ from `want` in count or in any bit (counted, so every rank reaches
// the collectives after it).
int ranksUnlike(const grove::Comm& comm, const grove::ParticleSystem<Grain>& got, std::span<const Grain> want) {
  bool unlike = got.size() != want.size();
  for (std::size_t i = 0; !unlike && i < got.size(); ++i) unlike = !sameBits(got[i], want[i]);
  return comm.allreduceSum(unlike ? 1 : 0);
}

using grove::testing_support::errorOf;

}  // namespace

TEST(Checkpoint, RestartIsBitwiseTheUninterruptedRun) {
  const grove::Comm comm = grove::Comm::world();
  const std::string prefix = freshPrefix(comm, "bitwise");
  const std::int64_t n = 3001;
  const int k = 6;

  DriftRun uninterrupted(comm, n);
  uninterrupted.advance(2 * k);

  std::string path;
  {
    DriftRun first(comm, n);
    first.advance(k);
    path = first.checkpointAt(prefix).write(first.step);
  }  // the first run ends here
  DriftRun restarted(comm, 7);  // other particles, cuts and streams: all must be replaced
  const grove::io::RestartInfo info = restarted.checkpointAt(prefix).restore(path);
  EXPECT_EQ(info.step, k);
  EXPECT_EQ(info.writer_ranks, comm.size());
  EXPECT_TRUE(info.same_rank_count);
  EXPECT_EQ(restarted.step, k);
  restarted.advance(k);

  EXPECT_EQ(restarted.step, uninterrupted.step);
  EXPECT_EQ(restarted.time, uninterrupted.time);
  EXPECT_EQ(ranksUnlike(comm, restarted.grains, uninterrupted.grains.particles()), 0);
  EXPECT_EQ(restarted.dinfo.decompositionCount(), uninterrupted.dinfo.decompositionCount());
  int boxes_unlike = 0;
  for (int r = 0; r < comm.size(); ++r)
    boxes_unlike += !(restarted.dinfo.getPosDomain(r).low == uninterrupted.dinfo.getPosDomain(r).low &&
                      restarted.dinfo.getPosDomain(r).high == uninterrupted.dinfo.getPosDomain(r).high);
  EXPECT_EQ(boxes_unlike, 0);
  EXPECT_EQ(restarted.kicks(), uninterrupted.kicks()) << "the per-rank stream did not continue";
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(restarted.grains.size())),
            comm.allreduceSum(static_cast<std::int64_t>(uninterrupted.grains.size())));
}

TEST(Checkpoint, ValuesOfEveryKindComeBack) {
  const grove::Comm comm = grove::Comm::world();
  const std::string prefix = freshPrefix(comm, "values");
  double time = 0.1 + 1e-17;
  std::string label = "Evrard, gamma = 5/3";
  std::vector<double> energies = {-0.6667, 0.05, 0.0, 1e-300};
  std::vector<std::int32_t> mine = {comm.rank(), 10 * comm.rank()};
  grove::io::Checkpoint writer(prefix, comm);
  writer.value("time", time).value("label", label).value("energies", energies).perRankValue("mine", mine);
  const std::string path = writer.write(3);
  EXPECT_EQ(path, writer.pathFor(3));

  double time_back = 0;
  std::string label_back = "x";
  std::vector<double> energies_back(9, 1.0);
  std::vector<std::int32_t> mine_back;
  grove::io::Checkpoint reader(prefix, comm);
  reader.value("time", time_back).value("label", label_back).value("energies", energies_back);
  reader.perRankValue("mine", mine_back);
  reader.restore(path);
  EXPECT_EQ(time_back, time);
  EXPECT_EQ(label_back, label);
  EXPECT_EQ(energies_back, energies);
  EXPECT_EQ(mine_back, mine);
}

TEST(Checkpoint, AnotherRankCountGetsEveryParticleOnce) {
  const grove::Comm world = grove::Comm::world();
  const std::string prefix = freshPrefix(world, "ranks");
  const std::int64_t n = 2000;
  DriftRun run(world, n);
  run.advance(2);
  run.time = 0.75;
  const std::string path = run.checkpointAt(prefix).write(run.step);
  std::vector<std::int64_t> ids;
  for (const Grain& g : run.grains) ids.push_back(g.id);
  std::vector<std::int64_t> written = world.allgatherv(std::span<const std::int64_t>(ids));
  std::sort(written.begin(), written.end());

  // Read by every rank but the last (one rank reads alone on a single-rank run: the same count).
  const int readers = std::max(1, world.size() - 1);
  const grove::Comm comm = world.split(world.rank() < readers ? 0 : 1, world.rank());
  if (world.rank() < readers) {
    grove::ParticleSystem<Grain> grains(comm);
    grove::DomainInfo dinfo(comm);
    double time = 0;
    std::int64_t step = 0;
    std::mt19937_64 kicks(99);
    const std::mt19937_64 untouched = kicks;
    grove::io::Checkpoint c(prefix, comm);
    c.particles("grains", grains).domain("domain", dinfo).value("time", time).value("step", step);
    c.perRankValue("kicks", kicks);
    const grove::io::RestartInfo info = c.restore(path);
    EXPECT_EQ(info.writer_ranks, world.size());
    EXPECT_EQ(info.same_rank_count, readers == world.size());
    EXPECT_EQ(time, 0.75);
    EXPECT_EQ(step, 2);
    ids.clear();
    for (const Grain& g : grains) ids.push_back(g.id);
    std::vector<std::int64_t> read = comm.allgatherv(std::span<const std::int64_t>(ids));
    std::sort(read.begin(), read.end());
    EXPECT_EQ(read, written);
    // A contiguous share each.
    const auto me = static_cast<std::int64_t>(comm.rank()), ranks = static_cast<std::int64_t>(comm.size());
    const auto total = static_cast<std::int64_t>(written.size());
    EXPECT_EQ(static_cast<std::int64_t>(grains.size()), total * (me + 1) / ranks - total * me / ranks);
    if (readers != world.size()) {
      EXPECT_EQ(dinfo.decompositionCount(), 0) << "the domain was restored at another rank count";
      EXPECT_TRUE(kicks == untouched) << "a per-rank value was restored at another rank count";
      // The restarted run goes on from here: decompose, exchange.
      dinfo.decomposeDomainAll(grains);
      grains.exchangeParticle(dinfo);
      int outside = 0;
      for (const Grain& g : grains) outside += dinfo.getPosDomain(comm.rank()).contains(g.pos) ? 0 : 1;
      EXPECT_EQ(outside, 0);
    }
  }
  world.barrier();
}

TEST(Checkpoint, KeepsTheLastTwoAndFallsBackPastADamagedOne) {
  const grove::Comm comm = grove::Comm::world();
  const std::string prefix = freshPrefix(comm, "keep");
  double time = 0;
  grove::io::Checkpoint c(prefix, comm);
  c.value("time", time);
  for (std::int64_t step : {10, 20, 30}) {
    time = static_cast<double>(step);
    c.write(step);
  }
  EXPECT_EQ(c.list(), (std::vector<std::string>{c.pathFor(20), c.pathFor(30)}));
  int temporaries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(prefix).parent_path()))
    temporaries += entry.path().extension() == ".tmp";
  EXPECT_EQ(temporaries, 0);

  // The newest cut short: restoreLatest warns and takes the one before.
  if (comm.isRoot()) std::filesystem::resize_file(c.pathFor(30), std::filesystem::file_size(c.pathFor(30)) - 3);
  comm.barrier();
  time = -1;
  const auto info = c.restoreLatest();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->path, c.pathFor(20));
  EXPECT_EQ(info->step, 20);
  EXPECT_EQ(time, 20.0);

  // Nothing there: a fresh start.
  grove::io::Checkpoint none(freshPrefix(comm, "none"), comm);
  none.value("time", time);
  EXPECT_FALSE(none.restoreLatest().has_value());
}

TEST(Checkpoint, RefusesBadFilesNamingThemAndChangesNothing) {
  const grove::Comm comm = grove::Comm::world();
  const std::string prefix = freshPrefix(comm, "refuse");
  const std::int64_t n = 500;
  DriftRun run(comm, n);
  run.time = 2.5;
  const std::string path = run.checkpointAt(prefix).write(4);
  const std::string dir = std::filesystem::path(prefix).parent_path().string();

  // Copies cut short, foreign, with one flipped byte in the particles' data, and with two 8-byte
  // words of that data swapped (the checksum's words: the block starts at 64): the same bytes in
  // another order, which a checksum blind to order (a sum, an xor) would pass.
  const std::string truncated = dir + "/truncated.ckpt", foreign = dir + "/foreign.ckpt", flipped = dir + "/flipped.ckpt";
  const std::string swapped = dir + "/swapped.ckpt";
  int swapped_words_differ = 0;
  if (comm.isRoot()) {
    std::filesystem::copy_file(path, truncated);
    std::filesystem::resize_file(truncated, std::filesystem::file_size(path) / 2);
    std::ofstream(foreign) << "time,step\n0.5,3\n" << std::string(200, 'x');
    std::filesystem::copy_file(path, flipped);
    std::fstream f(flipped, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(64 + 17);  // inside rank 0's first block (rank 0 holds grains at every rank count)
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(64 + 17);
    f.write(&c, 1);
    f.close();
    // The first grain's first word (its id) and the first of its other words that differs from
    // it (Grain: id, pos, vel, mass; the mass is never an id's bits, so there is one).
    std::filesystem::copy_file(path, swapped);
    std::fstream g(swapped, std::ios::in | std::ios::out | std::ios::binary);
    std::uint64_t words[8] = {};
    g.seekg(64);
    g.read(reinterpret_cast<char*>(words), sizeof words);
    for (std::size_t k = 1; k < 8 && !swapped_words_differ; ++k)
      if (g && words[k] != words[0]) std::swap(words[0], words[k]), swapped_words_differ = 1;
    g.seekp(64);
    g.write(reinterpret_cast<const char*>(words), sizeof words);
  }
  comm.broadcast(swapped_words_differ, 0);
  ASSERT_TRUE(swapped_words_differ) << "the swap must change the file";
  comm.barrier();

  DriftRun target(comm, 50);
  target.time = 9.0;
  const std::vector<Grain> before(target.grains.begin(), target.grains.end());
  auto refusal = [&](const std::string& file) {
    return errorOf([&] { target.checkpointAt(prefix).restore(file); });
  };
  const std::string missing = dir + "/missing.ckpt";
  for (const auto& [file, reason] : std::vector<std::pair<std::string, std::string>>{
           {missing, "cannot open"}, {truncated, "truncated"}, {foreign, "not a grove checkpoint"},
           {flipped, "damaged"}, {swapped, "damaged"}}) {
    const std::string message = refusal(file);
    EXPECT_NE(message.find(file), std::string::npos) << "the message does not name " << file << ": " << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
    EXPECT_EQ(target.time, 9.0);
    EXPECT_EQ(ranksUnlike(comm, target.grains, before), 0) << "a refused restore changed the particles";
  }

  // A record missing, and one of another type.
  double time = 0;
  grove::io::Checkpoint lacking(prefix, comm);
  lacking.value("time", time).value("energy", time);
  std::string message = errorOf([&] { lacking.restore(path); });
  EXPECT_NE(message.find("no record 'energy'"), std::string::npos) << message;
  grove::ParticleSystem<OtherGrain> others(comm);
  grove::io::Checkpoint mistyped(prefix, comm);
  mistyped.particles("grains", others);
  message = errorOf([&] { mistyped.restore(path); });
  EXPECT_NE(message.find("record 'grains' holds type"), std::string::npos) << message;
  EXPECT_EQ(time, 0.0);

  // A value that differs between ranks is no value of the run.
  if (comm.size() > 1) {
    double differs = comm.rank();
    grove::io::Checkpoint bad(prefix + "_bad", comm);
    bad.value("differs", differs);
    message = errorOf([&] { bad.write(1); });
    EXPECT_NE(message.find("differs between ranks"), std::string::npos) << message;
  }
  // Two records of one name.
  message = errorOf([&] { grove::io::Checkpoint(prefix, comm).value("t", time).value("t", time); });
  EXPECT_NE(message.find("two records are named 't'"), std::string::npos) << message;
}

namespace {

// A message without its "grove error on rank R in " (which names the rank that threw it).
std::string withoutRank(const std::string& message) {
  const std::size_t at = message.find(" in ");
  return at == std::string::npos ? message : message.substr(at + 4);
}

// Whether every rank holds the same text (its checksum's least and greatest agree).
bool sameOnEveryRank(const grove::Comm& comm, const std::string& text) {
  const std::uint64_t sum = grove::io::detail::checksum64(std::as_bytes(std::span(text.data(), text.size())));
  return comm.allreduceMin(sum) == comm.allreduceMax(sum);
}

// GROVE_FAULT_INJECT's setting for the rest of a scope, off again after it.
struct InjectedFaults {
  explicit InjectedFaults(const std::string& setting) { grove::detail::setFaultInjection(setting.c_str()); }
  ~InjectedFaults() { grove::detail::setFaultInjection(nullptr); }
};

}  // namespace

TEST(Checkpoint, PiecewiseChecksumIsTheWholeOne) {
  std::vector<std::byte> bytes(1000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((i * 37 + 11) & 0xff);
  for (std::size_t size : {0, 1, 7, 8, 9, 64, 999, 1000}) {
    const std::span<const std::byte> all(bytes.data(), size);
    for (std::size_t piece : {1, 3, 8, 13, 1000}) {
      grove::io::detail::Checksum64 sum(size);
      for (std::size_t at = 0; at < size; at += piece) sum.add(all.subspan(at, std::min(piece, size - at)));
      EXPECT_EQ(sum.value(), grove::io::detail::checksum64(all)) << size << " bytes in pieces of " << piece;
    }
  }
}

// Issue 29, items 1 and 2: a write that fails on one rank (a full disk: ENOSPC from GROVE_FAULT_INJECT)
// is the same error on every rank, naming the file and the system's reason; no rank is left waiting,
// no temporary stays, and the checkpoints written before are kept and restorable.
TEST(Checkpoint, AFullDiskOnOneRankFailsEveryRankAndKeepsTheGoodOnes) {
  const grove::Comm comm = grove::Comm::world();
  const std::string prefix = freshPrefix(comm, "full_disk");
  DriftRun run(comm, 400);
  grove::io::Checkpoint checkpoint = run.checkpointAt(prefix);
  for (int step : {10, 20}) {
    run.time = step;
    checkpoint.write(step);
  }
  const std::vector<Grain> at20(run.grains.begin(), run.grains.end());
  // The failing write: the last rank's first block, rank 0's first block, and rank 0's preamble
  // (written after its five blocks: grains, domain, time, step, kicks).
  const int last = comm.size() - 1;
  for (const std::string& setting : {fmt::format("enospc:1@{}", last), std::string("enospc:1@0"),
                                     std::string("enospc:6@0")}) {
    run.time = 30;
    std::string message;
    {
      InjectedFaults faults(setting);
      message = errorOf([&] { checkpoint.write(30); });
    }
    ASSERT_FALSE(message.empty()) << setting << ": the write did not fail";
    EXPECT_NE(message.find(checkpoint.pathFor(30) + ".tmp"), std::string::npos) << message;
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_TRUE(sameOnEveryRank(comm, withoutRank(message))) << setting << ": " << message;
    EXPECT_EQ(checkpoint.list(), (std::vector<std::string>{checkpoint.pathFor(10), checkpoint.pathFor(20)}));
    int temporaries = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(prefix).parent_path()))
      temporaries += entry.path().extension() == ".tmp";
    EXPECT_EQ(temporaries, 0) << setting;
  }
  // The newest good one comes back whole.
  DriftRun restarted(comm, 7);
  const auto info = restarted.checkpointAt(prefix).restoreLatest();
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->step, 20);
  EXPECT_EQ(restarted.time, 20.0);
  EXPECT_EQ(ranksUnlike(comm, restarted.grains, at20), 0);
  // And writing works again once there is room.
  EXPECT_EQ(checkpoint.write(30), checkpoint.pathFor(30));
  EXPECT_EQ(checkpoint.list(), (std::vector<std::string>{checkpoint.pathFor(20), checkpoint.pathFor(30)}));
}

// Issue 29, item 3: one flipped exponent bit in a body of the last writer rank is refused when the
// checkpoint is restored at another rank count (the shares cut across the writers' blocks), and
// restoreLatest falls back to the checkpoint before it.
TEST(Checkpoint, ADamagedBlockIsRefusedAtAnotherRankCount) {
  const grove::Comm world = grove::Comm::world();
  if (world.size() == 1) GTEST_SKIP() << "needs a checkpoint of more ranks than read it";
  const std::string prefix = freshPrefix(world, "damaged_elsewhere");
  grove::ParticleSystem<Grain> grains(world);
  addGrains(grains, 300);
  const auto written = world.allreduceSum(static_cast<std::int64_t>(grains.size()));
  double time = 1.0;
  grove::io::Checkpoint writer(prefix, world);
  writer.particles("grains", grains).value("time", time);
  writer.write(1);
  time = 2.0;
  const std::string path = writer.write(2);
  // Blocks lie rank by rank, records in order: the 8 bytes before the directory are the last rank's
  // time, the byte before them the high byte of its last grain's mass (sign and exponent).
  if (world.isRoot()) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    std::uint64_t directory_offset = 0;
    f.seekg(24);
    f.read(reinterpret_cast<char*>(&directory_offset), 8);
    const auto at = static_cast<std::streamoff>(directory_offset - 8 - 1);
    char c = 0;
    f.seekg(at);
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(at);
    f.write(&c, 1);
  }
  world.barrier();

  const int readers = world.size() - 1;
  const grove::Comm comm = world.split(world.rank() < readers ? 0 : 1, world.rank());
  if (world.rank() < readers) {
    grove::ParticleSystem<Grain> back(comm);
    addGrains(back, 5);
    const std::vector<Grain> before(back.begin(), back.end());
    double time_back = -1.0;
    grove::io::Checkpoint reader(prefix, comm);
    reader.particles("grains", back).value("time", time_back);
    const std::string message = errorOf([&] { reader.restore(path); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("record 'grains' of rank {} is damaged", world.size() - 1)), std::string::npos)
        << message;
    EXPECT_TRUE(sameOnEveryRank(comm, withoutRank(message))) << message;
    EXPECT_EQ(time_back, -1.0);
    EXPECT_EQ(ranksUnlike(comm, back, before), 0) << "a refused restore changed the particles";
    const auto info = reader.restoreLatest();
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->step, 1);
    EXPECT_EQ(time_back, 1.0);
    EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(back.size())), written);
  }
  world.barrier();
}
