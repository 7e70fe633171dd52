#pragma once
/// @file
/// grove::Runtime, the process's start and end, and grove::log, rank-0 logging.
#include <string_view>

#include <fmt/format.h>

namespace grove {

/// Starts and stops MPI (when grove is built with it) and reports ranks and threads.
///
/// Needs: exactly one, constructed first thing in main, before any other grove call; it works
/// with or without mpirun (one plain process is rank 0 of 1).
/// Promises: MPI is finalised when it is destroyed (if it initialised MPI), and an uncaught
/// exception on any rank ends every rank with one message naming the rank.
class Runtime {
 public:
  /// Initialises MPI with at least MPI_THREAD_FUNNELED (OpenMP threads compute, the master
  /// thread communicates) and installs the fatal-error handler: an uncaught exception on any
  /// rank prints one line naming the rank and ends every rank with a non-zero exit code.
  /// MPI may remove its own arguments from argc/argv.
  Runtime(int& argc, char**& argv);
  /// Finalises MPI if this Runtime initialised it.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// This process's rank in the world communicator (0 without MPI).
  int rank() const { return rank_; }
  /// The number of ranks in the world communicator (1 without MPI).
  int rankCount() const { return rank_count_; }
  /// OpenMP threads per rank (omp_get_max_threads).
  int threadCount() const;
  /// The thread level MPI granted (MPI_THREAD_*; 0 without MPI).
  int mpiThreadLevel() const { return thread_level_; }
  /// Whether this grove was built with MPI (false for a GROVE_MPI=OFF build).
  bool hasMpi() const;

  /// Prints the message and ends all ranks with exit_code. For errors caught in user code that
  /// the other ranks cannot know of; never returns.
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

/// Rank-0 logging with fmt's format string: prints one line once per run, not once per rank.
/// Needs a started Runtime; callable on every rank (the others print nothing).
template <class... Args>
void log(fmt::format_string<Args...> format, Args&&... args) {
  detail::logLine(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace grove
