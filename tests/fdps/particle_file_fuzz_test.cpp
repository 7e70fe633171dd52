// The particle-file readers under random damage: real files written by grove (ascii and binary,
// with a counting header, a header that counts nothing, and none; one file and one file per
// rank) are mutated many times (bit flips, byte changes, truncation, deletion, duplication,
// insertion, absurd counts) and read back on every rank. Each read must either throw grove::Error
// on every rank or give exactly what a plain sequential read of the same bytes gives; it must
// never crash or hang. Bounded and seeded, so a failure repeats; the AddressSanitizer build of the
// suite runs it too (tools/run_tests.sh).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "grove/grove.hpp"
#include "io_particles.hpp"

using namespace grove;
using namespace grove::io_testing;

namespace {

using Psys = ParticleSystem<IoParticle>;
using Bytes = std::vector<char>;

enum class HeaderKind { Counting, TimeOnly, None };

struct Layout {
  FileEncoding encoding;
  HeaderKind header;
  bool per_rank;
};

std::string describe(const Layout& l) {
  return fmt::format("{} {} {}", l.encoding == FileEncoding::Ascii ? "ascii" : "binary",
                     l.header == HeaderKind::Counting ? "counting-header" : l.header == HeaderKind::TimeOnly ? "time-header" : "no-header",
                     l.per_rank ? "per-rank" : "one-file");
}

Bytes readBytes(const std::string& name) {
  std::ifstream in(name, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string& name, const Bytes& bytes) {
  std::ofstream out(name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One random change to a file, of the kinds damage and careless editing produce.
void mutate(Bytes& b, std::mt19937_64& rng, FileEncoding encoding) {
  auto pick = [&](std::size_t n) { return n == 0 ? std::size_t{0} : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int kind = std::uniform_int_distribution<int>(0, 8)(rng);
  switch (kind) {
    case 0:  // flip a bit
      if (!b.empty()) b[pick(b.size())] ^= static_cast<char>(1 << pick(8));
      break;
    case 1:  // overwrite a byte
      if (!b.empty()) b[pick(b.size())] = static_cast<char>(pick(256));
      break;
    case 2:  // truncate
      b.resize(pick(b.size() + 1));
      break;
    case 3: {  // delete a range
      const std::size_t at = pick(b.size() + 1), n = std::min(b.size() - at, pick(40) + 1);
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
      break;
    }
    case 4: {  // duplicate a range
      const std::size_t at = pick(b.size() + 1), n = std::min(b.size() - at, pick(100) + 1);
      const Bytes copy(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), copy.begin(), copy.end());
      break;
    }
    case 5: {  // insert random bytes
      Bytes junk(pick(16) + 1);
      for (char& c : junk) c = static_cast<char>(pick(256));
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), junk.begin(), junk.end());
      break;
    }
    case 6: {  // insert text that record readers stumble on
      static const char* const kTokens[] = {"x", " ", "\n", "\n\n", "-", "nan", "inf", "0x", "9999999999999999999999",
                                            "<", ">", "%", "\t\t"};
      const std::string t = kTokens[pick(std::size(kTokens))];
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pick(b.size() + 1)), t.begin(), t.end());
      break;
    }
    default: {  // an absurd or negative count where a counting header keeps it (the first 8 bytes or the first word)
      static const long long kCounts[] = {-1, 0, 1, 2147483647, 2147483648LL, 4000000000LL, -2147483648LL,
                                          1000000000000LL};
      const long long count = kCounts[pick(std::size(kCounts))];
      if (encoding == FileEncoding::Binary) {
        if (b.size() >= sizeof count) std::memcpy(b.data(), &count, sizeof count);
      } else {
        const auto space = std::find(b.begin(), b.end(), ' ');
        const std::string t = std::to_string(count);
        b.erase(b.begin(), space);
        b.insert(b.begin(), t.begin(), t.end());
      }
    }
  }
}

// A plain sequential read of one file with the same user readers: the reference. nullopt where
// grove must refuse the file (it ends before the records it should hold, a binary remainder that
// is not a whole record, a record that reads nothing).
std::optional<std::vector<IoParticle>> referenceRead(const std::string& name, const Layout& l) {
  std::FILE* f = std::fopen(name.c_str(), l.encoding == FileEncoding::Ascii ? "r" : "rb");
  if (!f) return std::nullopt;
  long long n = -1;
  if (l.header == HeaderKind::Counting) {
    CountingHeader h;
    n = l.encoding == FileEncoding::Ascii ? h.readAscii(f) : h.readBinary(f);
  } else if (l.header == HeaderKind::TimeOnly) {
    TimeOnlyHeader h;
    n = l.encoding == FileEncoding::Ascii ? h.readAscii(f) : h.readBinary(f);
  }
  const long start = std::ftell(f);
  std::fseek(f, 0, SEEK_END);
  const long end = std::ftell(f);
  std::fseek(f, start, SEEK_SET);
  std::optional<std::vector<IoParticle>> out;
  if (n < 0) {
    if (l.encoding == FileEncoding::Ascii) {
      n = 0;
      bool text = false;
      for (int c; (c = std::getc(f)) != EOF;) {
        if (c == '\n') n += text, text = false;
        else if (!std::isspace(c)) text = true;
      }
      n += text;
      std::clearerr(f);
      std::fseek(f, start, SEEK_SET);
    } else {
      const long rest = end - start;
      if (rest % static_cast<long>(sizeof(IoParticle)) != 0) return std::fclose(f), std::nullopt;
      n = rest / static_cast<long>(sizeof(IoParticle));
    }
  }
  if (n > 2147483647LL) return std::fclose(f), std::nullopt;
  out.emplace();
  for (long long i = 0; i < n; ++i) {
    IoParticle p{};
    const long at = std::ftell(f);
    if (l.encoding == FileEncoding::Ascii) {
      int c;
      do c = std::getc(f);
      while (c != EOF && std::isspace(c));
      if (c == EOF) return std::fclose(f), std::nullopt;
      std::ungetc(c, f);
      const long record = std::ftell(f);
      p.readAscii(f);
      if (std::ftell(f) == record) return std::fclose(f), std::nullopt;
    } else {
      if (end - at < static_cast<long>(sizeof(IoParticle))) return std::fclose(f), std::nullopt;
      p.readBinary(f);
    }
    out->push_back(p);
  }
  std::fclose(f);
  return out;
}

bool bitwiseEqual(const std::vector<IoParticle>& a, const std::vector<IoParticle>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(IoParticle)) == 0);
}

class ParticleFileFuzz : public ::testing::TestWithParam<int> {};  // index into kLayouts

const Layout kLayouts[] = {
    {FileEncoding::Ascii, HeaderKind::Counting, false},  {FileEncoding::Ascii, HeaderKind::TimeOnly, false},
    {FileEncoding::Ascii, HeaderKind::None, false},      {FileEncoding::Binary, HeaderKind::Counting, false},
    {FileEncoding::Binary, HeaderKind::TimeOnly, false}, {FileEncoding::Binary, HeaderKind::None, false},
    {FileEncoding::Ascii, HeaderKind::Counting, true},   {FileEncoding::Ascii, HeaderKind::None, true},
    {FileEncoding::Binary, HeaderKind::Counting, true},  {FileEncoding::Binary, HeaderKind::None, true},
};

constexpr int kMutationsPerLayout = 160;

}  // namespace

TEST_P(ParticleFileFuzz, EveryDamagedFileIsRefusedOnEveryRankOrReadExactly) {
  const Layout layout = kLayouts[GetParam()];
  const Comm comm;
  const int rank = comm.rank(), ranks = comm.size();
  const std::string stem = fmt::format("fuzz_{}_np{}", GetParam(), ranks);
  const std::string format = "%s_%03d_%03d";
  const std::string my_file = layout.per_rank ? fmt::format("{}_{:03d}_{:03d}", stem, ranks, rank) : stem;

  // The seed file(s): real particles, written by grove.
  Psys psys;
  for (int i = 0; i < 12 + 5 * rank; ++i) psys.add(makeIoParticle(100 * rank + i));
  CountingHeader counting{layout.per_rank ? static_cast<long long>(psys.size()) : psys.getNumberOfParticleGlobal(), 0.5};
  TimeOnlyHeader time_only{0.25};
  // Writes (psys) or reads (back) in the layout's encoding, file arrangement and header.
  auto transfer = [&](Psys& particles, bool writing, CountingHeader& c, TimeOnlyHeader& t) {
    const bool ascii = layout.encoding == FileEncoding::Ascii;
    auto go = [&](auto&&... args) {
      if (writing && ascii) particles.writeParticleAscii(stem, args...);
      else if (writing) particles.writeParticleBinary(stem, args...);
      else if (ascii) particles.readParticleAscii(stem, args...);
      else particles.readParticleBinary(stem, args...);
    };
    auto withFormat = [&](auto&&... header) {
      if (layout.per_rank) go(format, header...);
      else go(header...);
    };
    if (layout.header == HeaderKind::Counting) withFormat(c);
    else if (layout.header == HeaderKind::TimeOnly) withFormat(t);
    else withFormat();
  };
  auto write = [&] { transfer(psys, true, counting, time_only); };
  write();
  comm.barrier();
  const bool i_write = layout.per_rank || rank == 0;
  const Bytes seed = i_write ? readBytes(my_file) : Bytes{};

  int refused = 0, read = 0;
  for (int iteration = 0; iteration < kMutationsPerLayout; ++iteration) {
    if (i_write) {
      // One-file layouts: the same damage on every rank count; per rank: each rank's own.
      std::mt19937_64 rng(1234567 + 7919 * static_cast<std::uint64_t>(iteration) + 104729 * static_cast<std::uint64_t>(GetParam()) +
                          (layout.per_rank ? 15485863 * static_cast<std::uint64_t>(rank) : 0));
      Bytes damaged = seed;
      const int changes = 1 + static_cast<int>(rng() % 3);
      for (int c = 0; c < changes; ++c) mutate(damaged, rng, layout.encoding);
      writeBytes(my_file, damaged);
    }
    comm.barrier();
    // The reference on every rank: its own file, or the one file.
    const auto expected = referenceRead(my_file, layout);
    const bool any_refused = comm.allreduceMax(expected ? 0 : 1) == 1;

    Psys back;
    back.add(makeIoParticle(-7));  // a failed read must leave this in place
    bool threw = false;
    std::string message;
    try {
      CountingHeader h;
      TimeOnlyHeader t;
      transfer(back, false, h, t);
    } catch (const Error& e) {
      threw = true;
      message = e.what();
    }
    // Judged on every rank, and the loop left together on a failure, so that no rank waits for
    // another in a collective.
    const std::string what = fmt::format("{}, mutation {}", describe(layout), iteration);
    bool ok = threw == any_refused;
    EXPECT_TRUE(ok) << what << (threw ? ": refused a readable file: " + message : ": read a damaged file");
    if (ok && threw) {
      ++refused;
      EXPECT_NE(message.find(stem), std::string::npos) << what << ": the message must name the file: " << message;
      ok = back.size() == 1 && back[0].id == -7;
      EXPECT_TRUE(ok) << what << ": a failed read changed the particles";
    } else if (ok) {
      ++read;
      const std::vector<IoParticle> got =
          layout.per_rank ? std::vector<IoParticle>(back.begin(), back.end()) : comm.allgatherv(back.particles());
      ok = bitwiseEqual(got, *expected);
      EXPECT_TRUE(ok) << what << ": " << got.size() << " particles read, the reference " << expected->size();
    }
    if (comm.allreduceMax(ok ? 0 : 1) == 1) break;
  }
  if (rank == 0)
    grove::log("{}: {} damaged files refused, {} read exactly", describe(layout), refused, read);
  // The mutations reach both outcomes (the seed is fixed, so these counts are too).
  EXPECT_GT(refused, 0);
  EXPECT_GT(read, 0);
  comm.barrier();
  std::remove(my_file.c_str());
}

INSTANTIATE_TEST_SUITE_P(Layouts, ParticleFileFuzz, ::testing::Range(0, static_cast<int>(std::size(kLayouts))));
