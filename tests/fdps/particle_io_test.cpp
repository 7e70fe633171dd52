// Particle files (grove/particles/particle_files.hpp through ParticleSystem's FDPS members): every layout
// and encoding round-trips count and payload bit for bit at any rank count, particles are handed
// out as FDPS does, and every failure throws grove::Error naming the file on every rank while
// leaving the particles as they were.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "grove/core/fault_injection.hpp"
#include "grove/grove.hpp"
#include "io_particles.hpp"

using namespace grove;
using namespace grove::io_testing;

namespace {

using Psys = ParticleSystem<IoParticle>;

// Rank r holds 5 + 3r particles, except rank 1, which holds none (an empty rank must work).
void fillUnevenly(Psys& psys) {
  const int r = psys.comm().rank();
  const std::int64_t count = r == 1 ? 0 : 5 + 3 * r;
  std::int64_t first = 0;
  for (int k = 0; k < r; ++k) first += k == 1 ? 0 : 5 + 3 * k;
  psys.resize(0);
  for (std::int64_t i = 0; i < count; ++i) psys.add(makeIoParticle(1000 + first + i));
}

// All ranks' particles concatenated in rank order, on every rank.
std::vector<IoParticle> inRankOrder(const Psys& psys) { return psys.comm().allgatherv(psys.particles()); }

void expectSameSequence(const std::vector<IoParticle>& expected, const std::vector<IoParticle>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    ASSERT_TRUE(samePayload(expected[i], actual[i]))
        << "record " << i << ": id " << expected[i].id << " vs " << actual[i].id;
}

// FDPS hands out n records as n/p per rank, with the remainder on rank 0, in file order.
void expectFdpsShare(const Psys& psys, std::size_t n_total) {
  const auto ranks = static_cast<std::size_t>(psys.comm().size());
  const std::size_t expected = n_total / ranks + (psys.comm().rank() == 0 ? n_total % ranks : 0);
  EXPECT_EQ(psys.size(), expected);
}

class ParticleFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    fillUnevenly(psys_);
    original_ = inRankOrder(psys_);
  }
  void TearDown() override {
    comm_.barrier();
    for (const auto& f : files_) std::remove(f.c_str());
    comm_.barrier();
  }
  // A file name private to this test and this rank count (ctest runs the rank counts at once).
  std::string fileName(const std::string& stem) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = fmt::format("fdps_io_{}_{}_np{}", info->name(), stem, comm_.size());
    files_.push_back(name);
    for (int r = 0; r < comm_.size(); ++r) files_.push_back(fmt::format("{}_{:03d}_{:03d}", name, comm_.size(), r));
    return name;
  }
  // A sentinel content that a failed read must leave in place.
  static Psys sentinelSystem() {
    Psys p;
    p.add(makeIoParticle(-7));
    return p;
  }
  static void expectSentinel(const Psys& p) {
    ASSERT_EQ(p.size(), 1u);
    EXPECT_TRUE(samePayload(p[0], makeIoParticle(-7)));
  }
  // Runs f, expecting grove::Error on this rank with a message naming `file`.
  template <class F>
  static void expectErrorNaming(F&& f, const std::string& file) {
    try {
      f();
      ADD_FAILURE() << "no grove::Error was thrown";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  }

  Comm comm_;
  Psys psys_;
  std::vector<IoParticle> original_;
  std::vector<std::string> files_;
};

TEST_F(ParticleFiles, AsciiOneFileWithoutHeader) {
  const auto file = fileName("a");
  psys_.writeParticleAscii(file);
  Psys back = sentinelSystem();
  back.readParticleAscii(file);
  expectFdpsShare(back, original_.size());
  expectSameSequence(original_, inRankOrder(back));
}

TEST_F(ParticleFiles, AsciiOneFileWithHeaderReadOnEveryRank) {
  const auto file = fileName("a");
  CountingHeader header;
  header.n_body = psys_.getNumberOfParticleGlobal();
  header.time = 0.1;
  psys_.writeParticleAscii(file.c_str(), header);
  Psys back;
  CountingHeader read_header;
  back.readParticleAscii(file.c_str(), read_header);
  EXPECT_EQ(read_header.n_body, static_cast<long long>(original_.size()));
  EXPECT_EQ(read_header.time, 0.1);
  expectFdpsShare(back, original_.size());
  expectSameSequence(original_, inRankOrder(back));
}

TEST_F(ParticleFiles, AsciiCountedRecordsIgnoreBlankLines) {
  const auto file = fileName("a");
  TimeOnlyHeader header{2.5};
  psys_.writeParticleAscii(file, header);
  if (comm_.rank() == 0) {  // trailing blank lines must not become particles
    std::FILE* f = std::fopen(file.c_str(), "a");
    std::fputs("\n  \n\n", f);
    std::fclose(f);
  }
  comm_.barrier();
  Psys back;
  TimeOnlyHeader read_header;
  back.readParticleAscii(file, read_header);
  EXPECT_EQ(read_header.time, 2.5);
  expectSameSequence(original_, inRankOrder(back));
}

TEST_F(ParticleFiles, BinaryOneFileWithoutHeader) {
  const auto file = fileName("b");
  psys_.writeParticleBinary(file);
  Psys back = sentinelSystem();
  back.readParticleBinary(file);
  expectFdpsShare(back, original_.size());
  expectSameSequence(original_, inRankOrder(back));
}

TEST_F(ParticleFiles, BinaryOneFileWithHeader) {
  const auto file = fileName("b");
  CountingHeader header{psys_.getNumberOfParticleGlobal(), 3.0};
  psys_.writeParticleBinary(file, header);
  Psys back;
  CountingHeader read_header;
  back.readParticleBinary(file, read_header);
  EXPECT_EQ(read_header.n_body, static_cast<long long>(original_.size()));
  EXPECT_EQ(read_header.time, 3.0);
  expectSameSequence(original_, inRankOrder(back));
}

TEST_F(ParticleFiles, BinaryCountedRecordsAfterHeader) {
  const auto file = fileName("b");
  TimeOnlyHeader header{4.0};
  psys_.writeParticleBinary(file, header);
  Psys back;
  TimeOnlyHeader read_header;
  back.readParticleBinary(file, read_header);
  EXPECT_EQ(read_header.time, 4.0);
  expectSameSequence(original_, inRankOrder(back));
}

TEST_F(ParticleFiles, OneFilePerRankKeepsEachRanksParticlesInOrder) {
  for (const bool binary : {false, true}) {
    const auto file = fileName(binary ? "pb" : "pa");
    CountingHeader header{static_cast<long long>(psys_.size()), 5.0};
    Psys back = sentinelSystem();
    CountingHeader read_header;
    if (binary) {
      psys_.writeParticleBinary(file, "%s_%03d_%03d", header);
      back.readParticleBinary(file, "%s_%03d_%03d", read_header);
    } else {
      psys_.writeParticleAscii(file, "%s_%03d_%03d", header);
      back.readParticleAscii(file, "%s_%03d_%03d", read_header);
    }
    EXPECT_EQ(read_header.n_body, static_cast<long long>(psys_.size()));
    expectSameSequence({psys_.begin(), psys_.end()}, {back.begin(), back.end()});
  }
}

TEST_F(ParticleFiles, OneFilePerRankWithoutHeader) {
  const auto file = fileName("p");
  const std::string format = "%s_%03d_%03d";
  psys_.writeParticleAscii(file, format.c_str());
  Psys back;
  back.readParticleAscii(file, format);
  expectSameSequence({psys_.begin(), psys_.end()}, {back.begin(), back.end()});
}

TEST_F(ParticleFiles, MemberFunctionChoosesTheRecordFormat) {
  const auto file = fileName("m");
  CountingHeader header{psys_.getNumberOfParticleGlobal(), 0.0};
  psys_.writeParticleAscii(file, header, &IoParticle::writeAsciiIdFirstAndLast);
  Psys back;
  CountingHeader read_header;
  back.readParticleAscii(file, read_header, &IoParticle::readAsciiIdFirstAndLast);
  expectSameSequence(original_, inRankOrder(back));
  // The file really is in the second format.
  if (comm_.rank() == 0 && !original_.empty()) {
    std::FILE* f = std::fopen(file.c_str(), "r");
    char line[512];
    ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);  // header
    ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);
    std::fclose(f);
    EXPECT_EQ(line[0], '<');
  }
}

TEST_F(ParticleFiles, EmptySystemRoundTrips) {
  const auto file = fileName("e");
  Psys none;
  CountingHeader header{0, 1.0};
  none.writeParticleAscii(file, header);
  Psys back = sentinelSystem();
  back.readParticleAscii(file, header);
  EXPECT_EQ(back.getNumberOfParticleGlobal(), 0);
  none.writeParticleBinary(file);
  back = sentinelSystem();
  back.readParticleBinary(file);
  EXPECT_EQ(back.getNumberOfParticleGlobal(), 0);
}

// ---- failures ---------------------------------------------------------------------------------------

TEST_F(ParticleFiles, MissingFileIsAnErrorOnEveryRank) {
  const std::string file = fmt::format("no_such_dir_np{}/missing.dat", comm_.size());
  Psys back = sentinelSystem();
  expectErrorNaming([&] { back.readParticleAscii(file); }, file);
  expectSentinel(back);
  CountingHeader header;
  expectErrorNaming([&] { back.readParticleBinary(file, header); }, file);
  expectSentinel(back);
}

TEST_F(ParticleFiles, MissingFileOfOneRankIsAnErrorOnEveryRank) {
  const auto file = fileName("p");
  psys_.writeParticleAscii(file, "%s_%03d_%03d");
  comm_.barrier();
  const int victim = comm_.size() - 1;
  if (comm_.rank() == victim) std::remove(fmt::format("{}_{:03d}_{:03d}", file, comm_.size(), victim).c_str());
  comm_.barrier();
  Psys back = sentinelSystem();
  expectErrorNaming([&] { back.readParticleAscii(file, "%s_%03d_%03d"); }, file);
  expectSentinel(back);
}

TEST_F(ParticleFiles, ShortAsciiFileIsAnErrorOnEveryRank) {
  const auto file = fileName("s");
  if (comm_.rank() == 0) {  // the header promises 10 particles, the file holds 7
    std::FILE* f = std::fopen(file.c_str(), "w");
    CountingHeader{10, 0.0}.writeAscii(f);
    for (int i = 0; i < 7; ++i) makeIoParticle(i).writeAscii(f);
    std::fclose(f);
  }
  comm_.barrier();
  Psys back = sentinelSystem();
  CountingHeader header;
  expectErrorNaming([&] { back.readParticleAscii(file, header); }, file);
  expectSentinel(back);
}

TEST_F(ParticleFiles, ShortBinaryFileIsAnErrorOnEveryRank) {
  const auto file = fileName("s");
  // With a header promising more records than there are.
  if (comm_.rank() == 0) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    CountingHeader{10, 0.0}.writeBinary(f);
    for (int i = 0; i < 7; ++i) makeIoParticle(i).writeBinary(f);
    std::fclose(f);
  }
  comm_.barrier();
  Psys back = sentinelSystem();
  CountingHeader header;
  expectErrorNaming([&] { back.readParticleBinary(file, header); }, file);
  expectSentinel(back);
  comm_.barrier();

  // Without a header, cut inside the last record: not a whole number of records.
  const auto cut = fileName("c");
  if (comm_.rank() == 0) {
    std::FILE* f = std::fopen(cut.c_str(), "wb");
    for (int i = 0; i < 3; ++i) makeIoParticle(i).writeBinary(f);
    std::fwrite("xyz", 1, 3, f);
    std::fclose(f);
  }
  comm_.barrier();
  expectErrorNaming([&] { back.readParticleBinary(cut); }, cut);
  expectSentinel(back);
}

TEST_F(ParticleFiles, FormatWithoutTheRankIsAnError) {
  const auto file = fileName("f");
  Psys back = sentinelSystem();
  expectErrorNaming([&] { psys_.writeParticleAscii(file, "%s_%d.dat"); }, "%s_%d.dat");
  expectErrorNaming([&] { back.readParticleAscii(file, "%d_%s_%d"); }, "%d_%s_%d");
  expectSentinel(back);
}

TEST_F(ParticleFiles, UnwritableFileIsAnErrorOnEveryRank) {
  const std::string file = fmt::format("no_such_dir_np{}/out.dat", comm_.size());
  expectErrorNaming([&] { psys_.writeParticleAscii(file); }, file);
  expectErrorNaming([&] { psys_.writeParticleBinary(file, "%s_%03d_%03d"); }, file);
}

TEST_F(ParticleFiles, FullDiskIsAnErrorOnEveryRank) {
  std::FILE* probe = std::fopen("/dev/full", "w");
  if (probe == nullptr) GTEST_SKIP() << "no /dev/full here";
  std::fclose(probe);
  expectErrorNaming([&] { psys_.writeParticleAscii("/dev/full"); }, "/dev/full");
}

// Issue 29: a write that fails on one rank is the same error on every rank, naming the file and
// the system's reason: /dev/full for the one file rank 0 writes, GROVE_FAULT_INJECT (ENOSPC) for the
// last rank's own file.
TEST_F(ParticleFiles, AFailedWriteIsTheSameErrorOnEveryRankWithTheReason) {
  auto message_of = [](auto&& write) {
    try {
      write();
    } catch (const Error& e) {
      const std::string what = e.what();
      return what.substr(std::min(what.find(" in "), what.size()));  // without "grove error on rank R"
    }
    return std::string();
  };
  auto same_on_every_rank = [&](const std::string& text) {
    const std::vector<char> mine(text.begin(), text.end());
    const std::vector<char> first = [&] {
      std::vector<char> t = mine;
      comm_.broadcast(t, 0);
      return t;
    }();
    return comm_.allreduceSum(first == mine ? 0 : 1) == 0;
  };
  std::FILE* probe = std::fopen("/dev/full", "w");
  if (probe != nullptr) {
    std::fclose(probe);
    const std::string message = message_of([&] { psys_.writeParticleAscii("/dev/full"); });
    EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
    EXPECT_TRUE(same_on_every_rank(message)) << message;
  }
  const auto file = fileName("full");
  const int last = comm_.size() - 1;
  detail::setFaultInjection(fmt::format("enospc:1@{}", last).c_str());
  const std::string message = message_of([&] { psys_.writeParticleBinary(file, "%s_%03d_%03d"); });
  detail::setFaultInjection(nullptr);
  EXPECT_NE(message.find(fmt::format("{}_{:03d}_{:03d}", file, comm_.size(), last)), std::string::npos) << message;
  EXPECT_NE(message.find("No space left on device"), std::string::npos) << message;
  EXPECT_TRUE(same_on_every_rank(message)) << message;
}

// ---- contracts --------------------------------------------------------------------------------------
struct NoIoMembers {
  Vec3d getPos() const { return {}; }
};
static_assert(HasReadAscii<IoParticle> && HasWriteAscii<IoParticle> && HasReadBinary<IoParticle> &&
              HasWriteBinary<IoParticle>);
static_assert(!HasReadAscii<NoIoMembers> && !HasWriteAscii<NoIoMembers> && !HasReadBinary<NoIoMembers> &&
              !HasWriteBinary<NoIoMembers>);
static_assert(HeaderReadsAscii<CountingHeader> && HeaderWritesAscii<const CountingHeader>);
static_assert(!HeaderReadsAscii<const CountingHeader>);
static_assert(io::detail::validArgList<const char*, CountingHeader&, void (IoParticle::*)(std::FILE*)>());
static_assert(!io::detail::validArgList<CountingHeader&, const char*>());
static_assert(!io::detail::validArgList<int>());

}  // namespace
