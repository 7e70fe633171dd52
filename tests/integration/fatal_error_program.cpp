// A program that fails on one rank while every other rank waits in a barrier. Without grove's
// fatal-error handler the waiting ranks would hang for ever; with it, the uncaught grove::Error
// prints one line naming the failing rank and ends every rank with a non-zero exit code.
// Used by expect_fatal_abort.cmake.
//
//   fatal_error_program [failing_rank]     (default: the last rank)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/runtime/runtime.hpp"

int main(int argc, char** argv) {
  grove::Runtime rt(argc, argv);
  const int failing_rank = argc > 1 ? std::atoi(argv[1]) : rt.rankCount() - 1;
  if (failing_rank < 0 || failing_rank >= rt.rankCount()) {
    std::fprintf(stderr, "fatal_error_program: failing rank %s is not in [0, %d)\n", argc > 1 ? argv[1] : "?",
                 rt.rankCount());
    return 2;
  }
  if (rt.rank() == failing_rank) throw grove::Error("fatal_error_program", "deliberate failure for the abort test");
  grove::Comm().barrier();  // never completes: the failing rank does not arrive
  // Reaching this line means the barrier let a rank through without the failing one.
  std::fprintf(stderr, "fatal_error_program: rank %d passed the barrier; the abort did not happen\n", rt.rank());
  return 0;
}
