#include "grove/runtime/runtime.hpp"

#include <omp.h>

#include <cstdio>
#include <exception>

#include "grove/comm/backend.hpp"
#include "grove/core/error.hpp"

namespace grove {

namespace {

// std::terminate is reached when an exception escapes main (or a thread). Unwinding further
// would leave the other ranks blocked in their next collective, so print and abort them all.
[[noreturn]] void terminateAllRanks() noexcept {
  std::string message = "terminate called without an active exception";
  if (auto current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const Error& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = fmt::format("uncaught exception on rank {}: {}", detail::worldRankForMessages(), e.what());
    } catch (...) {
      message = fmt::format("uncaught non-standard exception on rank {}", detail::worldRankForMessages());
    }
  }
  Runtime::abortAll(message);
}

}  // namespace

Runtime::Runtime(int& argc, char**& argv) {
  std::set_terminate(terminateAllRanks);
  detail::backendInitialize(&argc, &argv, &thread_level_, &we_initialized_);
  const auto world = detail::worldComm();
  rank_ = detail::commRank(*world);
  rank_count_ = detail::commSize(*world);
}

Runtime::~Runtime() {
  if (we_initialized_) detail::backendFinalize();
}

int Runtime::threadCount() const { return omp_get_max_threads(); }

bool Runtime::hasMpi() const { return detail::backendHasMpi(); }

void Runtime::abortAll(std::string_view message, int exit_code) noexcept {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::fflush(stdout);
  detail::backendAbortAll(exit_code);
}

namespace detail {
void logLine(std::string_view line) {
  if (worldRankForMessages() != 0) return;
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}
}  // namespace detail

}  // namespace grove
