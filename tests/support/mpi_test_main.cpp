// GoogleTest main for grove: starts the runtime, and lets only rank 0 print the usual report
// while every rank still prints its own failures (tagged with the rank), so a failure on rank 3
// is seen. mpirun's exit code is non-zero if any rank fails.
//
// Skips: when no test failed on any rank but some test skipped on some rank, every rank that
// skipped one prints "[grove] SKIPPED on rank N (no test failed): <test>: <reason>", which the
// ctest entries take as a skip (GROVE_TEST_SKIP_REGEX, tests/CMakeLists.txt). A run with any
// failure never prints it, so a skip cannot hide a failure, whichever ranks skipped. A test written
// for more ranks than the run has says so with "needs N ranks": it runs at the suite's larger
// rank counts, so that skip is the suite's design, not something missing here, and does not
// count.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/runtime/runtime.hpp"

namespace {

class RankTaggedFailures : public testing::EmptyTestEventListener {
 public:
  explicit RankTaggedFailures(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    fmt::print(stderr, "[rank {}] {}:{}: failure\n{}\n", rank_, result.file_name() ? result.file_name() : "?",
               result.line_number(), result.summary());
  }

 private:
  int rank_;
};

// "Suite.Test: reason" of every test this rank skipped for something other than its rank count.
std::vector<std::string> skippedTests() {
  static const std::regex rank_count("^needs [0-9]+ ranks");
  std::vector<std::string> skipped;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const testing::TestInfo& test = *suite.GetTestInfo(t);
      if (!test.should_run() || !test.result()->Skipped()) continue;
      std::string reason;
      for (int k = 0; k < test.result()->total_part_count(); ++k)
        if (test.result()->GetTestPartResult(k).skipped()) reason = test.result()->GetTestPartResult(k).message();
      if (std::regex_search(reason, rank_count)) continue;
      skipped.push_back(fmt::format("{}.{}: {}", suite.name(), test.name(), reason));
    }
  }
  return skipped;
}

}  // namespace

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  testing::InitGoogleTest(&argc, argv);
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (runtime.rank() != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankTaggedFailures(runtime.rank()));
  }
  const int my_result = RUN_ALL_TESTS();
  // Rank 0's summary covers only rank 0: say so when another rank failed.
  const grove::Comm world;
  const auto results = world.allgather(my_result);
  std::string failed_ranks;
  for (std::size_t r = 0; r < results.size(); ++r)
    if (results[r] != 0) failed_ranks += fmt::format(" {}", r);
  if (!failed_ranks.empty()) {
    grove::log("[grove] FAILED on rank(s):{}", failed_ranks);
    return 1;
  }
  for (const std::string& test : skippedTests())
    fmt::print("[grove] SKIPPED on rank {} (no test failed): {}\n", runtime.rank(), test);
  std::fflush(stdout);
  return 0;
}
