// GoogleTest main for grove: starts the runtime, and lets only rank 0 print the usual report
// while every rank still prints its own failures (tagged with the rank), so a failure on rank 3
// is seen. mpirun's exit code is non-zero if any rank fails.
#include <gtest/gtest.h>

#include <string>

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
  if (!failed_ranks.empty()) grove::log("[grove] FAILED on rank(s):{}", failed_ranks);
  return failed_ranks.empty() ? 0 : 1;
}
