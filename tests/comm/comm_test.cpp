// grove::Comm against hand-computed expectations. Every expectation is a function of this rank
// and the rank count, so the same test proves something at 1, 2, 3 and 4 ranks; the values are
// chosen so that a wrong rank order, a wrong root, a wrong element type or a reduction over the
// wrong operand gives a different answer.
//
// Every rank reaches every collective of a test: checks come after the collectives, or use
// EXPECT (which does not return), never an ASSERT that would leave some ranks behind.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/vec3.hpp"

// Readable failure output for vectors (gtest would otherwise print raw bytes).
namespace grove {
template <class T>
void PrintTo(const Vec3<T>& v, std::ostream* os) {
  *os << fmt::format("{}", v);
}
}  // namespace grove

namespace {

using grove::Boxd;
using grove::Comm;
using grove::SparseMessage;
using grove::Request;
using grove::Vec3d;
using grove::Vec3f;

testing::AssertionResult contains(std::string_view text, std::string_view part) {
  if (text.find(part) != std::string_view::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// A user type reduced element by element through a ReductionLayout specialisation.
struct Extent {
  double low;
  double high;
};

// A trivially copyable record for broadcasts and gathers: three fields of different types, so
// a copy that drops or shifts bytes shows.
struct Record {
  std::int32_t id;
  double value;
  char tag[6];
};

Record makeRecord(int r) {
  Record rec{};
  rec.id = 1000 + r;
  rec.value = 0.25 * r - 3.0;
  for (int i = 0; i < 5; ++i) rec.tag[i] = static_cast<char>('a' + (r + i) % 26);
  rec.tag[5] = '\0';
  return rec;
}

void expectRecordEq(const Record& actual, const Record& expected) {
  EXPECT_EQ(actual.id, expected.id);
  EXPECT_EQ(actual.value, expected.value);
  EXPECT_STREQ(actual.tag, expected.tag);
}

}  // namespace

template <>
struct grove::ReductionLayout<Extent> {
  using Scalar = double;
  static constexpr std::size_t count = 2;
};

namespace {

// ---- the communicator itself ---------------------------------------------------------------------

TEST(CommWorld, RankAndSizeMatchTheLauncher) {
  const Comm comm;
  // The launcher tells each process its place (OpenMPI: OMPI_COMM_WORLD_*, MPICH's Hydra:
  // PMI_*); a process started without one, or a serial build, is rank 0 of 1.
  const char* size_env = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* rank_env = std::getenv("OMPI_COMM_WORLD_RANK");
  if (!size_env || !rank_env) {
    size_env = std::getenv("PMI_SIZE");
    rank_env = std::getenv("PMI_RANK");
  }
  if (!size_env || !rank_env) size_env = rank_env = nullptr;
  const int expected_size = size_env ? std::atoi(size_env) : 1;
  const int expected_rank = rank_env ? std::atoi(rank_env) : 0;
  EXPECT_EQ(comm.size(), expected_size);
  EXPECT_EQ(comm.rank(), expected_rank);
  EXPECT_EQ(comm.isRoot(), expected_rank == 0);
  EXPECT_EQ(Comm::world().rank(), comm.rank());
  EXPECT_EQ(Comm::world().size(), comm.size());
}

TEST(CommBarrier, NoRankLeavesBeforeTheLastArrives) {
  const Comm comm;
  // Rank 0 arrives 200 ms late. Compared on one host's monotonic clock, every rank must leave
  // the barrier after rank 0 entered it; a barrier that did not wait would let the others
  // leave about 200 ms earlier.
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::uint64_t host_hash = std::hash<std::string>{}(host);
  const bool one_host = comm.allreduceMin(host_hash) == comm.allreduceMax(host_hash);

  using Clock = std::chrono::steady_clock;
  auto nanos = [] { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); };
  comm.barrier();
  std::int64_t root_entered = 0;
  if (comm.rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    root_entered = nanos();
  }
  comm.barrier();
  const std::int64_t left = nanos();
  comm.broadcast(root_entered, 0);
  if (one_host) {
    EXPECT_GE(left, root_entered) << "rank " << comm.rank() << " left the barrier "
                                  << (root_entered - left) / 1000000.0 << " ms before rank 0 entered it";
  } else {
    GTEST_SKIP() << "ranks run on several hosts; their monotonic clocks cannot be compared";
  }
}

// ---- reductions of one value ---------------------------------------------------------------------

TEST(CommAllreduce, AllreduceSumOfRankPlusOneIsTriangularNumber) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const int triangular = n * (n + 1) / 2;
  EXPECT_EQ(comm.allreduceSum(r + 1), triangular);
  EXPECT_EQ(comm.allreduceSum(static_cast<std::int64_t>(r + 1)), triangular);
  EXPECT_EQ(comm.allreduceSum(static_cast<double>(r + 1)), triangular);
  EXPECT_EQ(comm.allreduceSum(static_cast<float>(r + 1)), static_cast<float>(triangular));
  EXPECT_EQ(comm.allreduceSum(static_cast<long double>(r + 1)), static_cast<long double>(triangular));
  EXPECT_EQ(comm.allreduceSum(static_cast<std::uint16_t>(r + 1)), triangular);
}

TEST(CommAllreduce, AllreduceSumOfInt64AboveTwoToThe32KeepsAllBits) {
  const Comm comm;
  const std::int64_t r = comm.rank(), n = comm.size();
  // (r + 1) * 2^40 + r: the high and the low parts both must survive.
  const std::int64_t value = ((r + 1) << 40) + r;
  const std::int64_t expected = ((n * (n + 1) / 2) << 40) + n * (n - 1) / 2;
  EXPECT_EQ(comm.allreduceSum(value), expected);
}

TEST(CommAllreduce, AllreduceMinMaxOfIntFindTheExtremeRanks) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // 10 - 3r: largest on rank 0, smallest (possibly negative) on the last rank.
  EXPECT_EQ(comm.allreduceMin(10 - 3 * r), 10 - 3 * (n - 1));
  EXPECT_EQ(comm.allreduceMax(10 - 3 * r), 10);
  // (r + 2) mod n: the smallest is on rank n - 2, the largest on rank n - 3 (wrapping), not at the ends.
  EXPECT_EQ(comm.allreduceMin((r + 2) % n), 0);
  EXPECT_EQ(comm.allreduceMax((r + 2) % n), n - 1);
}

TEST(CommAllreduce, AllreduceMinMaxOfInt64UseAll64Bits) {
  const Comm comm;
  const std::int64_t r = comm.rank(), n = comm.size();
  // Values differ only above bit 32, so a 32-bit reduction would see them all as equal.
  const std::int64_t value = -(r + 1) * (std::int64_t{1} << 36);
  EXPECT_EQ(comm.allreduceMin(value), -n * (std::int64_t{1} << 36));
  EXPECT_EQ(comm.allreduceMax(value), -(std::int64_t{1} << 36));
}

TEST(CommAllreduce, AllreduceMaxOfUint64ComparesUnsigned) {
  const Comm comm;
  const std::uint64_t r = static_cast<std::uint64_t>(comm.rank());
  const std::uint64_t n = static_cast<std::uint64_t>(comm.size());
  // Even ranks hold 2^63 + r (negative if read as signed), odd ranks hold r.
  const std::uint64_t top = std::uint64_t{1} << 63;
  const std::uint64_t value = r % 2 == 0 ? top + r : r;
  const std::uint64_t largest_even_rank = (n - 1) % 2 == 0 ? n - 1 : n - 2;
  EXPECT_EQ(comm.allreduceMax(value), top + largest_even_rank);
  EXPECT_EQ(comm.allreduceMin(value), n > 1 ? std::uint64_t{1} : top);
}

TEST(CommAllreduce, AllreduceMinMaxOfDoubleAndFloat) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const double d = 0.5 - 1.25 * r;  // exact in binary
  EXPECT_EQ(comm.allreduceMin(d), 0.5 - 1.25 * (n - 1));
  EXPECT_EQ(comm.allreduceMax(d), 0.5);
  const float f = 0.75f * static_cast<float>(r) - 1.0f;
  EXPECT_EQ(comm.allreduceMin(f), -1.0f);
  EXPECT_EQ(comm.allreduceMax(f), 0.75f * static_cast<float>(n - 1) - 1.0f);
}

TEST(CommAllreduce, AllreduceOfVec3dIsComponentWise) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // x grows with rank, y shrinks, z is largest on the middle rank: each component's extreme is
  // on a different rank, so only a component-wise reduction gets all three right.
  const auto middle = n / 2;
  const Vec3d v{1.0 + r, -2.0 * r, -std::abs(static_cast<double>(r - middle))};
  double z_sum = 0.0, z_min = 0.0;
  for (int k = 0; k < n; ++k) {
    z_sum += -std::abs(static_cast<double>(k - middle));
    z_min = std::min(z_min, -std::abs(static_cast<double>(k - middle)));
  }
  EXPECT_EQ(comm.allreduceSum(v), Vec3d(n + n * (n - 1) / 2.0, -1.0 * n * (n - 1), z_sum));
  EXPECT_EQ(comm.allreduceMin(v), Vec3d(1.0, -2.0 * (n - 1), z_min));
  EXPECT_EQ(comm.allreduceMax(v), Vec3d(1.0 * n, 0.0, 0.0));
}

TEST(CommAllreduce, AllreduceOfVec3fIsComponentWise) {
  const Comm comm;
  const float r = static_cast<float>(comm.rank()), n = static_cast<float>(comm.size());
  const Vec3f v{r, 1.0f - r, 2.0f * r + 0.5f};
  EXPECT_EQ(comm.allreduceSum(v), Vec3f(n * (n - 1) / 2, n - n * (n - 1) / 2, n * (n - 1) + 0.5f * n));
  EXPECT_EQ(comm.allreduceMin(v), Vec3f(0.0f, 2.0f - n, 0.5f));
  EXPECT_EQ(comm.allreduceMax(v), Vec3f(n - 1, 1.0f, 2.0f * (n - 1) + 0.5f));
}

TEST(CommAllreduce, AllreduceOfUserTypeWithReductionLayoutIsElementWise) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const Extent mine{-1.0 * r, 10.0 + r};
  const Extent low = comm.allreduceMin(mine);
  const Extent high = comm.allreduceMax(mine);
  const Extent sum = comm.allreduceSum(mine);
  EXPECT_EQ(low.low, -1.0 * (n - 1));
  EXPECT_EQ(low.high, 10.0);
  EXPECT_EQ(high.low, 0.0);
  EXPECT_EQ(high.high, 10.0 + (n - 1));
  EXPECT_EQ(sum.low, -n * (n - 1) / 2.0);
  EXPECT_EQ(sum.high, 10.0 * n + n * (n - 1) / 2.0);
}

// ---- reductions of arrays ------------------------------------------------------------------------

// Element i on rank r is 3 * ((r + i) mod n) + i: for each i the smallest and largest sit on
// different ranks, so a reduction that is not element-wise (or shifts elements) fails.
std::vector<int> rotatingValues(int r, int n, int length) {
  std::vector<int> v(static_cast<std::size_t>(length));
  for (int i = 0; i < length; ++i) v[static_cast<std::size_t>(i)] = 3 * ((r + i) % n) + i;
  return v;
}

TEST(CommAllreduceArray, VectorSumMinMaxAreElementWise) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  constexpr int kLength = 7;
  std::vector<int> sum = rotatingValues(r, n, kLength);
  std::vector<int> low = sum, high = sum;
  comm.allreduceSum(sum);
  comm.allreduceMin(low);
  comm.allreduceMax(high);
  ASSERT_EQ(sum.size(), static_cast<std::size_t>(kLength));
  ASSERT_EQ(low.size(), static_cast<std::size_t>(kLength));
  ASSERT_EQ(high.size(), static_cast<std::size_t>(kLength));
  for (int i = 0; i < kLength; ++i) {
    const auto k = static_cast<std::size_t>(i);
    // Over all ranks (r + i) mod n takes each of 0 .. n-1 once.
    EXPECT_EQ(sum[k], 3 * n * (n - 1) / 2 + n * i) << "element " << i;
    EXPECT_EQ(low[k], i) << "element " << i;
    EXPECT_EQ(high[k], 3 * (n - 1) + i) << "element " << i;
  }
}

TEST(CommAllreduceUnion, HoldsEveryRanksBoxAndIgnoresEmptyOnes) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // Rank r's box spans [-r, r + 1] on x, [r, 2r + 1] on y and [-2 - r, -1] on z; the last rank
  // (when there are several) holds nothing.
  const bool empty = n > 1 && r == n - 1;
  const double d = r;
  const Boxd mine = empty ? Boxd::empty() : Boxd{{-d, d, -2.0 - d}, {d + 1.0, 2.0 * d + 1.0, -1.0}};
  const Boxd all = comm.allreduceUnion(mine);
  const int holders = n > 1 ? n - 1 : 1;  // ranks 0 .. holders-1 hold a box
  const double last = holders - 1;
  EXPECT_EQ(all.low, Vec3d(-last, 0.0, -2.0 - last));
  EXPECT_EQ(all.high, Vec3d(last + 1.0, 2.0 * last + 1.0, -1.0));
  EXPECT_TRUE(comm.allreduceUnion(Boxd::empty()).isEmpty());
}

TEST(CommAllreduceArray, SpanFormReducesOnlyTheViewedElements) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // Six doubles; the reduction sees elements 1..4 only. The outer two keep this rank's values.
  std::vector<double> sum(6), low(6), high(6);
  for (int i = 0; i < 6; ++i) {
    const double value = (i % 2 == 0 ? 1.0 : -1.0) * (r + 1) + 0.5 * i;
    sum[static_cast<std::size_t>(i)] = low[static_cast<std::size_t>(i)] = high[static_cast<std::size_t>(i)] = value;
  }
  const std::vector<double> before = sum;
  comm.allreduceSum(std::span<double>(sum).subspan(1, 4));
  comm.allreduceMin(std::span<double>(low).subspan(1, 4));
  comm.allreduceMax(std::span<double>(high).subspan(1, 4));
  for (int i : {0, 5}) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(sum[k], before[k]) << "element " << i << " lies outside the span";
    EXPECT_EQ(low[k], before[k]) << "element " << i << " lies outside the span";
    EXPECT_EQ(high[k], before[k]) << "element " << i << " lies outside the span";
  }
  const double triangular = n * (n + 1) / 2.0;
  for (int i = 1; i <= 4; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const double sign = i % 2 == 0 ? 1.0 : -1.0;
    EXPECT_EQ(sum[k], sign * triangular + 0.5 * i * n) << "element " << i;
    // The positive elements are smallest on rank 0, the negative ones on the last rank.
    EXPECT_EQ(low[k], (sign > 0 ? 1.0 : -1.0 * n) + 0.5 * i) << "element " << i;
    EXPECT_EQ(high[k], (sign > 0 ? 1.0 * n : -1.0) + 0.5 * i) << "element " << i;
  }
}

TEST(CommAllreduceArray, VectorOfInt64AndFloatAndVec3d) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  std::vector<std::int64_t> big{(std::int64_t{r} + 1) << 33, -(std::int64_t{r} << 35)};
  std::vector<float> small{static_cast<float>(r), -static_cast<float>(r) * 0.5f};
  std::vector<Vec3d> vecs{Vec3d(r, -r, 1.0), Vec3d(2.0 * r, 0.0, -1.0 * r)};
  std::vector<std::int64_t> big_max = big;
  std::vector<float> small_min = small;
  std::vector<Vec3d> vecs_min = vecs, vecs_max = vecs;
  comm.allreduceSum(big);
  comm.allreduceMax(big_max);
  comm.allreduceSum(small);
  comm.allreduceMin(small_min);
  comm.allreduceSum(vecs);
  comm.allreduceMin(vecs_min);
  comm.allreduceMax(vecs_max);

  const std::int64_t tri = std::int64_t{n} * (n + 1) / 2, tri0 = std::int64_t{n} * (n - 1) / 2;
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0], tri << 33);
  EXPECT_EQ(big[1], -(tri0 << 35));
  ASSERT_EQ(big_max.size(), 2u);
  EXPECT_EQ(big_max[0], std::int64_t{n} << 33);
  EXPECT_EQ(big_max[1], 0);
  ASSERT_EQ(small.size(), 2u);
  EXPECT_EQ(small[0], static_cast<float>(tri0));
  EXPECT_EQ(small[1], -0.5f * static_cast<float>(tri0));
  ASSERT_EQ(small_min.size(), 2u);
  EXPECT_EQ(small_min[0], 0.0f);
  EXPECT_EQ(small_min[1], -0.5f * static_cast<float>(n - 1));
  ASSERT_EQ(vecs.size(), 2u);
  EXPECT_EQ(vecs[0], Vec3d(tri0, -1.0 * tri0, n));
  EXPECT_EQ(vecs[1], Vec3d(2.0 * tri0, 0.0, -1.0 * tri0));
  ASSERT_EQ(vecs_min.size(), 2u);
  EXPECT_EQ(vecs_min[0], Vec3d(0.0, -(n - 1.0), 1.0));
  EXPECT_EQ(vecs_min[1], Vec3d(0.0, 0.0, -(n - 1.0)));
  ASSERT_EQ(vecs_max.size(), 2u);
  EXPECT_EQ(vecs_max[0], Vec3d(n - 1.0, 0.0, 1.0));
  EXPECT_EQ(vecs_max[1], Vec3d(2.0 * (n - 1), 0.0, 0.0));
}

TEST(CommAllreduceArray, EmptyVectorStaysEmpty) {
  const Comm comm;
  std::vector<double> empty;
  comm.allreduceSum(empty);
  comm.allreduceMin(empty);
  comm.allreduceMax(empty);
  EXPECT_TRUE(empty.empty());
  // The communicator still works afterwards.
  EXPECT_EQ(comm.allreduceSum(1), comm.size());
}

// ---- broadcast -----------------------------------------------------------------------------------

TEST(CommBroadcast, ScalarTakesTheRootsValueFromRootZeroAndFromTheLastRank) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  int from_first = 11 * r + 3;
  comm.broadcast(from_first);  // default root 0
  std::int64_t from_last = (std::int64_t{r} << 34) + 7;
  comm.broadcast(from_last, n - 1);
  double from_middle = -0.5 * r;
  comm.broadcast(from_middle, n / 2);
  EXPECT_EQ(from_first, 3);
  EXPECT_EQ(from_last, (std::int64_t{n - 1} << 34) + 7);
  EXPECT_EQ(from_middle, -0.5 * (n / 2));
}

TEST(CommBroadcast, StructArrivesWholeFromTheLastRank) {
  const Comm comm;
  const int r = comm.rank(), root = comm.size() - 1;
  Record rec = makeRecord(r);
  comm.broadcast(rec, root);
  expectRecordEq(rec, makeRecord(root));
  Vec3d v(r, 2.0 * r, -3.0 * r);
  comm.broadcast(v, root);
  EXPECT_EQ(v, Vec3d(root, 2.0 * root, -3.0 * root));
}

TEST(CommBroadcast, VectorTakesLengthAndContentsFromANonZeroRoot) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const int root = n > 1 ? 1 : 0;
  // The root holds root + 3 elements; every other rank starts with a different length (longer
  // or shorter) and different contents, all of which must be replaced.
  std::vector<std::int64_t> values(static_cast<std::size_t>(r == root ? root + 3 : 2 * r + 1));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 100 * r + static_cast<std::int64_t>(i);
  comm.broadcast(values, root);
  ASSERT_EQ(values.size(), static_cast<std::size_t>(root + 3));
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], 100 * root + static_cast<std::int64_t>(i));
}

TEST(CommBroadcast, VectorOfStructsFromTheLastRank) {
  const Comm comm;
  const int r = comm.rank(), root = comm.size() - 1;
  std::vector<Record> recs;
  if (r == root)
    for (int k = 0; k < 4; ++k) recs.push_back(makeRecord(10 * root + k));
  comm.broadcast(recs, root);
  ASSERT_EQ(recs.size(), 4u);
  for (int k = 0; k < 4; ++k) expectRecordEq(recs[static_cast<std::size_t>(k)], makeRecord(10 * root + k));
}

TEST(CommBroadcast, EmptyVectorFromRootEmptiesEveryRank) {
  const Comm comm;
  const int r = comm.rank(), root = comm.size() - 1;
  std::vector<double> values(r == root ? 0 : 5, 1.0);
  comm.broadcast(values, root);
  EXPECT_TRUE(values.empty()) << "rank " << r << " kept " << values.size() << " elements";
}

// ---- gathers -------------------------------------------------------------------------------------

TEST(CommGather, AllgatherReturnsEveryRanksValueInRankOrder) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const std::vector<int> squares = comm.allgather(r * r + 1);
  const std::vector<Record> recs = comm.allgather(makeRecord(r));
  ASSERT_EQ(squares.size(), static_cast<std::size_t>(n));
  ASSERT_EQ(recs.size(), static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(squares[static_cast<std::size_t>(k)], k * k + 1) << "from rank " << k;
    expectRecordEq(recs[static_cast<std::size_t>(k)], makeRecord(k));
  }
}

// Rank r contributes (r mod 3 == 1) ? 0 : r + 2 elements, valued 1000 r + i: lengths 2, 0, 4, 5,
// so a rank with nothing sits in the middle (at 3 and 4 ranks) and at the end (at 2 ranks).
int unevenLength(int r) { return r % 3 == 1 ? 0 : r + 2; }
std::vector<std::int64_t> unevenBlock(int r) {
  std::vector<std::int64_t> block(static_cast<std::size_t>(unevenLength(r)));
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = 1000 * r + static_cast<std::int64_t>(i);
  return block;
}
std::vector<std::int64_t> unevenConcatenation(int n) {
  std::vector<std::int64_t> all;
  for (int k = 0; k < n; ++k) {
    const auto block = unevenBlock(k);
    all.insert(all.end(), block.begin(), block.end());
  }
  return all;
}

TEST(CommGather, AllgathervConcatenatesUnevenBlocksIncludingEmptyOnesInRankOrder) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const std::vector<std::int64_t> mine = unevenBlock(r);
  std::vector<int> counts{-1};
  const std::vector<std::int64_t> all = comm.allgatherv(std::span<const std::int64_t>(mine), &counts);
  const std::vector<std::int64_t> without_counts = comm.allgatherv(std::span<const std::int64_t>(mine));
  EXPECT_EQ(all, unevenConcatenation(n));
  EXPECT_EQ(without_counts, unevenConcatenation(n));
  ASSERT_EQ(counts.size(), static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) EXPECT_EQ(counts[static_cast<std::size_t>(k)], unevenLength(k)) << "rank " << k;
}

TEST(CommGather, AllgathervWhenOnlyTheLastRankContributes) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  std::vector<Vec3d> mine;
  if (r == n - 1) mine = {Vec3d(1, 2, 3), Vec3d(4, 5, 6)};
  std::vector<int> counts;
  const auto all = comm.allgatherv(std::span<const Vec3d>(mine), &counts);
  EXPECT_EQ(all, (std::vector<Vec3d>{Vec3d(1, 2, 3), Vec3d(4, 5, 6)}));
  std::vector<int> expected_counts(static_cast<std::size_t>(n), 0);
  expected_counts.back() = 2;
  EXPECT_EQ(counts, expected_counts);
}

TEST(CommGather, AllgathervOfNothingAnywhereIsEmpty) {
  const Comm comm;
  const std::vector<double> none;
  std::vector<int> counts;
  const auto all = comm.allgatherv(std::span<const double>(none), &counts);
  EXPECT_TRUE(all.empty());
  EXPECT_EQ(counts, std::vector<int>(static_cast<std::size_t>(comm.size()), 0));
}

TEST(CommGather, GathervCollectsUnevenBlocksOnRootZeroOnly) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const std::vector<std::int64_t> mine = unevenBlock(r);
  std::vector<int> counts;
  const auto gathered = comm.gatherv(std::span<const std::int64_t>(mine), 0, &counts);
  if (r == 0) {
    EXPECT_EQ(gathered, unevenConcatenation(n));
  } else {
    EXPECT_TRUE(gathered.empty()) << "rank " << r << " is not the root but received " << gathered.size();
  }
  ASSERT_EQ(counts.size(), static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) EXPECT_EQ(counts[static_cast<std::size_t>(k)], unevenLength(k)) << "rank " << k;
}

TEST(CommGather, GathervCollectsUnevenBlocksOnTheLastRankOnly) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size(), root = n - 1;
  const std::vector<std::int64_t> mine = unevenBlock(r);
  const auto gathered = comm.gatherv(std::span<const std::int64_t>(mine), root);
  if (r == root) {
    EXPECT_EQ(gathered, unevenConcatenation(n));
  } else {
    EXPECT_TRUE(gathered.empty()) << "rank " << r << " is not the root but received " << gathered.size();
  }
}

// ---- all-to-all ----------------------------------------------------------------------------------

TEST(CommAlltoall, ElementForRankDArrivesAtDInSourceOrder) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  std::vector<int> send(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) send[static_cast<std::size_t>(d)] = 100 * r + d;  // "from r to d"
  const std::vector<int> received = comm.alltoall(std::span<const int>(send));
  ASSERT_EQ(received.size(), static_cast<std::size_t>(n));
  for (int s = 0; s < n; ++s) EXPECT_EQ(received[static_cast<std::size_t>(s)], 100 * s + r) << "from rank " << s;
}

TEST(CommAlltoall, StructsTravelWhole) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  std::vector<Record> send;
  for (int d = 0; d < n; ++d) send.push_back(makeRecord(10 * r + d));
  const auto received = comm.alltoall(std::span<const Record>(send));
  ASSERT_EQ(received.size(), static_cast<std::size_t>(n));
  for (int s = 0; s < n; ++s) expectRecordEq(received[static_cast<std::size_t>(s)], makeRecord(10 * s + r));
}

TEST(CommAlltoall, WrongElementCountThrowsGroveErrorOnEveryRank) {
  const Comm comm;
  const int n = comm.size();
  // Every rank makes the same mistake, so every rank throws before any message is sent.
  const std::vector<int> too_many(static_cast<std::size_t>(n + 1), 1);
  const std::vector<int> too_few(static_cast<std::size_t>(n - 1), 1);
  try {
    (void)comm.alltoall(std::span<const int>(too_many));
    ADD_FAILURE() << "alltoall accepted " << n + 1 << " elements for " << n << " ranks";
  } catch (const grove::Error& e) {
    EXPECT_EQ(e.stage(), "Comm::alltoall");
    EXPECT_TRUE(contains(e.what(), std::to_string(n + 1)));
  }
  EXPECT_THROW((void)comm.alltoall(std::span<const int>(too_few)), grove::Error);
  // Nothing was left half-sent: a correct call afterwards still gives the right answer.
  std::vector<int> send(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) send[static_cast<std::size_t>(d)] = comm.rank() * n + d;
  const auto received = comm.alltoall(std::span<const int>(send));
  for (int s = 0; s < n; ++s) EXPECT_EQ(received[static_cast<std::size_t>(s)], s * n + comm.rank());
}

// Rank s sends (s + 2d + 1) mod 3 elements to rank d (zero for some pairs once n >= 2), valued
// 10000 s + 100 d + k.
int pairCount(int s, int d) { return (s + 2 * d + 1) % 3; }
std::int64_t pairValue(int s, int d, int k) { return 10000 * s + 100 * d + k; }

TEST(CommAlltoall, AlltoallvDeliversUnevenBlocksIncludingEmptyOnesWithTheirCounts) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  std::vector<std::int64_t> send;
  std::vector<int> send_counts(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d) {
    send_counts[static_cast<std::size_t>(d)] = pairCount(r, d);
    for (int k = 0; k < pairCount(r, d); ++k) send.push_back(pairValue(r, d, k));
  }
  std::vector<int> recv_counts{-1};
  const auto received = comm.alltoallv(std::span<const std::int64_t>(send), send_counts, &recv_counts);
  const auto received_again = comm.alltoallv(std::span<const std::int64_t>(send), send_counts);

  std::vector<std::int64_t> expected;
  std::vector<int> expected_counts;
  for (int s = 0; s < n; ++s) {
    expected_counts.push_back(pairCount(s, r));
    for (int k = 0; k < pairCount(s, r); ++k) expected.push_back(pairValue(s, r, k));
  }
  EXPECT_EQ(received, expected);
  EXPECT_EQ(received_again, expected);
  EXPECT_EQ(recv_counts, expected_counts);
}

TEST(CommAlltoall, AlltoallvWhereOnlyRankZeroSendsAndOnlyToTheLastRank) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  std::vector<double> send;
  std::vector<int> send_counts(static_cast<std::size_t>(n), 0);
  if (r == 0) {
    send = {1.5, 2.5, 3.5};
    send_counts.back() = 3;
  }
  std::vector<int> recv_counts;
  const auto received = comm.alltoallv(std::span<const double>(send), send_counts, &recv_counts);
  std::vector<int> expected_counts(static_cast<std::size_t>(n), 0);
  if (r == n - 1) {
    expected_counts.front() = 3;
    EXPECT_EQ(received, (std::vector<double>{1.5, 2.5, 3.5}));
  } else {
    EXPECT_TRUE(received.empty());
  }
  EXPECT_EQ(recv_counts, expected_counts);
}

TEST(CommAlltoall, AlltoallvWithCountsNotAddingUpToTheDataThrowsOnEveryRank) {
  const Comm comm;
  const int n = comm.size();
  // Every rank claims one element per destination but supplies one extra.
  const std::vector<int> send(static_cast<std::size_t>(n + 1), 4);
  const std::vector<int> send_counts(static_cast<std::size_t>(n), 1);
  EXPECT_THROW((void)comm.alltoallv(std::span<const int>(send), send_counts), grove::Error);
  // Wrong number of counts (not one per rank) is refused too.
  const std::vector<int> wrong_counts(static_cast<std::size_t>(n + 1), 0);
  const std::vector<int> none;
  EXPECT_THROW((void)comm.alltoallv(std::span<const int>(none), wrong_counts), grove::Error);
  EXPECT_EQ(comm.allreduceSum(1), n) << "the communicator is usable after the refusals";
}

// ---- sparse exchange -----------------------------------------------------------------------------

TEST(CommSparseExchange, EachRankHearsExactlyFromThoseThatSentToItInSourceOrder) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // Rank s sends {s, d, 1000 s + d} to d = s + 1 and to s + 3 (mod n; twice to one rank where they
  // coincide), and rank 0 also to itself; ranks s with s % 3 == 2 send nothing.
  std::vector<SparseMessage<std::array<int, 3>>> to;
  if (r % 3 != 2) {
    for (int step : {1, 3}) {
      const int d = (r + step) % n;
      to.push_back({d, {r, d, 1000 * r + d}});
    }
    if (r == 0) to.push_back({0, {0, 0, -7}});
  }
  const auto from = comm.exchangeSparse(to);
  // What should arrive, from every sender in rank order, each sender's messages in its order.
  std::vector<std::array<int, 4>> expected;  // source, then the value
  for (int s = 0; s < n; ++s) {
    if (s % 3 == 2) continue;
    for (int step : {1, 3})
      if ((s + step) % n == r) expected.push_back({s, s, r, 1000 * s + r});
    if (s == 0 && r == 0) expected.push_back({0, 0, 0, -7});
  }
  ASSERT_EQ(from.size(), expected.size());
  for (std::size_t k = 0; k < from.size(); ++k) {
    EXPECT_EQ(from[k].rank, expected[k][0]) << "message " << k;
    EXPECT_EQ(from[k].value, (std::array<int, 3>{expected[k][1], expected[k][2], expected[k][3]})) << "message " << k;
  }
}

TEST(CommSparseExchange, BackToBackExchangesDoNotMixTheirMessages) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // Twenty rounds: in round k rank s sends k to s + k (mod n) only when (s + k) is even. A
  // message taken by the wrong round would show as a wrong value or a wrong count.
  for (int k = 0; k < 20; ++k) {
    std::vector<SparseMessage<int>> to;
    if ((r + k) % 2 == 0) to.push_back({(r + k) % n, k});
    const auto from = comm.exchangeSparse(to);
    std::size_t expected = 0;
    for (int s = 0; s < n; ++s)
      if ((s + k) % 2 == 0 && (s + k) % n == r) ++expected;
    ASSERT_EQ(from.size(), expected) << "round " << k;
    for (const auto& m : from) EXPECT_EQ(m.value, k) << "round " << k << " from rank " << m.rank;
  }
}

TEST(CommSparseExchange, ADestinationOutsideTheCommunicatorIsRefused) {
  const Comm comm;
  const std::vector<SparseMessage<int>> to{{comm.size(), 1}};
  EXPECT_THROW((void)comm.exchangeSparse(to), grove::Error);
  EXPECT_EQ(comm.allreduceSum(1), comm.size()) << "the communicator is usable after the refusal";
}

TEST(CommTraffic, CountsMessagesAndBytesOfEachKind) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  comm.barrier();
  grove::resetCommTraffic();
  // One ring message of (r + 1) doubles out and (left + 1) doubles in, one allgather of an int,
  // one allreduce of a double, one sparse exchange of two ints to the right neighbour.
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  std::vector<double> out(static_cast<std::size_t>(r + 1), 1.0), in(static_cast<std::size_t>(left + 1), 0.0);
  {
    Request a = comm.irecv(std::span<double>(in), left, 9);
    Request b = comm.isend(std::span<const double>(out), right, 9);
  }
  (void)comm.allgather(r);
  (void)comm.allreduceSum(1.0);
  (void)comm.exchangeSparse(std::vector<SparseMessage<std::array<int, 2>>>{{right, {r, 1}}});
  const grove::CommTraffic t = grove::commTraffic();
  EXPECT_EQ(t.messages_sent, 2);
  EXPECT_EQ(t.bytes_sent, static_cast<std::int64_t>((r + 1) * sizeof(double) + 2 * sizeof(int)));
  EXPECT_EQ(t.messages_received, 2);
  EXPECT_EQ(t.bytes_received, static_cast<std::int64_t>((left + 1) * sizeof(double) + 2 * sizeof(int)));
  EXPECT_EQ(t.collectives, 3);  // allgather, allreduce, the sparse exchange's barrier
  EXPECT_EQ(t.collective_bytes, static_cast<std::int64_t>(n * sizeof(int) + sizeof(double)));
  EXPECT_EQ(t.alltoalls, 0);
  (void)comm.alltoall(std::vector<int>(static_cast<std::size_t>(n), r));
  EXPECT_EQ(grove::commTraffic().alltoalls, 1);
}

// ---- point-to-point ------------------------------------------------------------------------------

TEST(CommPointToPoint, RingPassesEachRanksMessageToTheNextRank) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  // Rank r sends r + 1 values 100 r + i; the receiver knows the length from the sender's rank.
  std::vector<int> outgoing(static_cast<std::size_t>(r + 1));
  for (std::size_t i = 0; i < outgoing.size(); ++i) outgoing[i] = 100 * r + static_cast<int>(i);
  std::vector<int> incoming(static_cast<std::size_t>(left + 1), -1);
  std::vector<Request> requests;
  requests.push_back(comm.irecv(std::span<int>(incoming), left, 17));
  requests.push_back(comm.isend(std::span<const int>(outgoing), right, 17));
  EXPECT_TRUE(requests[0].pending());
  grove::waitAll(requests);
  for (const auto& q : requests) EXPECT_FALSE(q.pending());
  for (std::size_t i = 0; i < incoming.size(); ++i) EXPECT_EQ(incoming[i], 100 * left + static_cast<int>(i));
}

TEST(CommPointToPoint, AllPairsExchangeWithWaitAllDeliversEveryMessage) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // From s to d: {s, d, 7 s + 13 d}; every rank also sends to itself.
  std::vector<std::array<int, 3>> outgoing(static_cast<std::size_t>(n));
  std::vector<std::array<int, 3>> incoming(static_cast<std::size_t>(n), {-1, -1, -1});
  std::vector<Request> requests;
  for (int s = 0; s < n; ++s)
    requests.push_back(comm.irecv(std::span<std::array<int, 3>>(&incoming[static_cast<std::size_t>(s)], 1), s, 5));
  for (int d = 0; d < n; ++d) {
    outgoing[static_cast<std::size_t>(d)] = {r, d, 7 * r + 13 * d};
    requests.push_back(
        comm.isend(std::span<const std::array<int, 3>>(&outgoing[static_cast<std::size_t>(d)], 1), d, 5));
  }
  grove::waitAll(requests);
  for (int s = 0; s < n; ++s) {
    const std::array<int, 3> expected{s, r, 7 * s + 13 * r};
    EXPECT_EQ(incoming[static_cast<std::size_t>(s)], expected) << "message from rank " << s;
  }
}

TEST(CommPointToPoint, MessageToOneselfArrivesAndTagsKeepMessagesApart) {
  const Comm comm;
  const int me = comm.rank();
  const std::vector<double> first{1.0 * me, 2.0}, second{-3.0, 4.0 * me, 5.0};
  std::vector<double> got_first(2, 0.0), got_second(3, 0.0);
  // Receives are posted for tag 2 before tag 1, and the sends come in the other order: only
  // matching by tag puts each message in its own buffer.
  Request r2 = comm.irecv(std::span<double>(got_second), me, 2);
  Request r1 = comm.irecv(std::span<double>(got_first), me, 1);
  Request s1 = comm.isend(std::span<const double>(first), me, 1);
  Request s2 = comm.isend(std::span<const double>(second), me, 2);
  s1.wait();
  s2.wait();
  r1.wait();
  r2.wait();
  EXPECT_EQ(got_first, first);
  EXPECT_EQ(got_second, second);
  // A send posted before its receive works too.
  const std::vector<int> early{me, 42};
  std::vector<int> late(2, 0);
  Request send = comm.isend(std::span<const int>(early), me, 3);
  Request recv = comm.irecv(std::span<int>(late), me, 3);
  recv.wait();
  send.wait();
  EXPECT_EQ(late, early);
}

TEST(CommPointToPoint, DestroyingAPendingRequestWaitsForIt) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  const std::vector<int> outgoing{r, r * r, -r};
  std::vector<int> incoming(3, -100);
  {
    Request send = comm.isend(std::span<const int>(outgoing), right, 9);
    Request recv = comm.irecv(std::span<int>(incoming), left, 9);
  }  // no wait(): the destructors must complete both
  EXPECT_EQ(incoming, (std::vector<int>{left, left * left, -left}));
}

TEST(CommPointToPoint, MoveAssigningARequestWaitsForTheOneItReplaces) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  const std::vector<int> a_out{r + 1}, b_out{-(r + 1)};
  std::vector<int> a_in{0}, b_in{0};
  Request send_a = comm.isend(std::span<const int>(a_out), right, 21);
  Request send_b = comm.isend(std::span<const int>(b_out), right, 22);
  Request recv = comm.irecv(std::span<int>(a_in), left, 21);
  recv = comm.irecv(std::span<int>(b_in), left, 22);  // completes the tag-21 receive first
  EXPECT_EQ(a_in[0], left + 1);
  recv.wait();
  EXPECT_FALSE(recv.pending());
  EXPECT_EQ(b_in[0], -(left + 1));
  send_a.wait();
  send_b.wait();
}

// ---- sub-communicators ---------------------------------------------------------------------------

TEST(CommSplit, EvenAndOddRanksFormSubCommunicatorsWithTheirOwnRanksAndReductions) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const int parity = r % 2;
  const Comm sub = comm.split(parity, r);
  const int sub_rank = sub.rank(), sub_size = sub.size();
  const int sum_of_world_ranks = sub.allreduceSum(r);
  const std::vector<int> members = sub.allgather(r);
  const int world_sum = comm.allreduceSum(r);  // the world is unaffected

  const int expected_size = parity == 0 ? (n + 1) / 2 : n / 2;
  EXPECT_EQ(sub_size, expected_size);
  EXPECT_EQ(sub_rank, r / 2);
  int expected_sum = 0;
  std::vector<int> expected_members;
  for (int k = parity; k < n; k += 2) {
    expected_sum += k;
    expected_members.push_back(k);
  }
  EXPECT_EQ(sum_of_world_ranks, expected_sum);
  EXPECT_EQ(members, expected_members);
  EXPECT_EQ(world_sum, n * (n - 1) / 2);
}

TEST(CommSplit, KeyOrdersTheRanksOfTheNewCommunicator) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  const Comm reversed = comm.split(0, n - r);  // one group, in reverse world order
  const int new_rank = reversed.rank();
  const std::vector<int> members = reversed.allgather(r);
  int from_new_root = r;
  reversed.broadcast(from_new_root, 0);
  EXPECT_EQ(new_rank, n - 1 - r);
  std::vector<int> expected(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) expected[static_cast<std::size_t>(k)] = n - 1 - k;
  EXPECT_EQ(members, expected);
  EXPECT_EQ(from_new_root, n - 1) << "rank 0 of the reversed communicator is world rank n-1";
}

// ---- agreement on failure ------------------------------------------------------------------------

TEST(CommAgreement, WhenTheLastRankFailsEveryRankThrowsAndOthersNameIt) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size(), failing = n - 1;
  constexpr std::string_view kStage = "comm-agreement-test";
  constexpr std::string_view kText = "particle 42 has position (nan, 0, 0)";
  std::optional<std::string> mine;
  if (r == failing) mine = std::string(kText);

  std::optional<std::string> caught;
  std::string stage;
  try {
    comm.throwIfAnyFailed(mine, kStage);
  } catch (const grove::Error& e) {
    caught = e.what();
    stage = e.stage();
  }
  ASSERT_TRUE(caught.has_value()) << "rank " << r << " did not throw although rank " << failing << " failed";
  EXPECT_EQ(stage, kStage);
  EXPECT_TRUE(contains(*caught, fmt::format("rank {}", r))) << "the message names the rank that throws";
  // What follows the stage name is the explanation; it must name the failing rank (the prefix
  // names the throwing rank, which would make a plain search pass on the failing rank itself).
  const std::size_t stage_at = caught->find(kStage);
  ASSERT_NE(stage_at, std::string::npos);
  const std::string explanation = caught->substr(stage_at + kStage.size());
  if (r == failing) {
    EXPECT_TRUE(contains(explanation, kText));
  } else {
    EXPECT_FALSE(contains(explanation, kText)) << "only the failing rank knows the text";
    EXPECT_TRUE(contains(explanation, fmt::format("rank {}", failing)));
  }
}

TEST(CommAgreement, WhenSeveralRanksFailOthersNameTheLowestFailingRank) {
  const Comm comm;
  const int r = comm.rank(), n = comm.size();
  // Ranks 1 .. n-1 with odd rank fail (none at one rank: then nobody may throw).
  std::optional<std::string> mine;
  if (r % 2 == 1) mine = fmt::format("odd rank {} objects", r);
  std::optional<std::string> caught;
  try {
    comm.throwIfAnyFailed(mine, "comm-agreement-test");
  } catch (const grove::Error& e) {
    caught = e.what();
  }
  if (n == 1) {
    EXPECT_FALSE(caught.has_value()) << *caught;
    return;
  }
  ASSERT_TRUE(caught.has_value()) << "rank " << r;
  if (r % 2 == 1) {
    EXPECT_TRUE(contains(*caught, fmt::format("odd rank {} objects", r)));
  } else {
    const std::size_t stage_at = caught->find("comm-agreement-test");
    ASSERT_NE(stage_at, std::string::npos) << *caught;
    const std::string explanation = caught->substr(stage_at);
    EXPECT_TRUE(contains(explanation, "rank 1")) << "rank 1 is the lowest failing rank";
  }
}

TEST(CommAgreement, WithNoFailureNoRankThrows) {
  const Comm comm;
  EXPECT_NO_THROW(comm.throwIfAnyFailed(std::nullopt, "comm-agreement-test"));
  // All ranks are still in step: a collective after it agrees.
  EXPECT_EQ(comm.allreduceSum(comm.rank() + 1), comm.size() * (comm.size() + 1) / 2);
}

TEST(CommAgreement, InASubCommunicatorOnlyItsMembersAreStopped) {
  const Comm comm;
  const int r = comm.rank();
  // Odd ranks fail inside the odd communicator; the even communicator sees no failure.
  const Comm sub = comm.split(r % 2, r);
  std::optional<std::string> mine;
  if (r % 2 == 1 && sub.rank() == sub.size() - 1) mine = "last odd rank objects";
  bool threw = false;
  try {
    sub.throwIfAnyFailed(mine, "comm-agreement-test");
  } catch (const grove::Error&) {
    threw = true;
  }
  EXPECT_EQ(threw, r % 2 == 1) << "rank " << r;
}

}  // namespace
