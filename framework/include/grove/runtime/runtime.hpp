#pragma once
// grove::Runtime: starts and stops MPI (when grove is built with it) and reports the thread
// count. Construct exactly one, first thing in main; it works with or without mpirun.
#include <string_view>

#include <fmt/format.h>

namespace grove {

class Runtime {
 public:
  // Initialises MPI with at least MPI_THREAD_FUNNELED (OpenMP threads compute, the master
  // thread communicates) and installs the fatal-error handler: an uncaught exception on any
  // rank prints one line naming the rank and ends every rank with a non-zero exit code.
  Runtime(int& argc, char**& argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int rank() const { return rank_; }
  int rankCount() const { return rank_count_; }
  int threadCount() const;       // OpenMP threads per rank
  int mpiThreadLevel() const { return thread_level_; }
  bool hasMpi() const;

  // Prints the error and ends all ranks. Use for errors caught in user code.
  [[noreturn]] static void abortAll(std::string_view message, int exit_code = 1) noexcept;

 private:
  int rank_ = 0;
  int rank_count_ = 1;
  int thread_level_ = 0;
  bool we_initialized_ = false;
};

namespace detail {
void logLine(std::string_view line);  // writes on rank 0 of the world only
}

// Rank-0 logging: prints once per run, not once per rank.
template <class... Args>
void log(fmt::format_string<Args...> format, Args&&... args) {
  detail::logLine(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace grove
