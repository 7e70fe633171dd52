#pragma once
// What the samples' command lines share: a parameter file (--config, TOML or INI through CLI11;
// the command line overrides it, a misspelt key or a bad value stops the run naming the option),
// checks of numbers that refuse NaN and infinity, of a particle count against this machine's
// memory and of a run that would take no step, the text a snapshot records of the run that wrote
// it, and the restart options (grove/io/checkpoint.hpp) with the check of a restart's options
// against its checkpoint's.
#include <CLI/CLI.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "grove/config.hpp"
#include "grove/io/checkpoint.hpp"
#include "grove/runtime/runtime.hpp"

namespace samples {

// ---- numbers --------------------------------------------------------------------------------------
// CLI11's PositiveNumber, NonNegativeNumber and Range let NaN through (every comparison with NaN is
// false), print their bounds with 309 digits, and CLI11 reads an int64 option with strtoll, which
// clamps an overflow to 2^63 - 1 without a word. These refuse NaN, infinity and overflow, and say
// the rule in a few words: "--dt: nan is not a finite number".

// A floating-point option: finite, and `ok` (described by `rule`, e.g. "a positive number").
template <class Ok>
CLI::Validator finiteNumber(std::string rule, std::string description, Ok ok) {
  return CLI::Validator(
      [rule, ok](std::string& input) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double value = std::strtod(input.c_str(), &end);
        if (end == input.c_str() || *end != '\0') return {};  // not a number: CLI11's conversion says so
        if (!std::isfinite(value)) return input + " is not a finite number";
        if (errno == ERANGE) return input + " is out of a double's range";
        return ok(value) ? std::string() : input + " is not " + rule;
      },
      std::move(description));
}
inline const CLI::Validator kPositive = finiteNumber("a positive number", "POSITIVE", [](double x) { return x > 0; });
inline const CLI::Validator kNonNegative =
    finiteNumber("a number >= 0", "NONNEGATIVE", [](double x) { return x >= 0; });
inline CLI::Validator inRange(double low, double high) {
  return finiteNumber(fmt::format("in [{}, {}]", low, high), fmt::format("[{}, {}]", low, high),
                      [=](double x) { return x >= low && x <= high; });
}

// An integer option: within std::int64_t (read as CLI11 reads it, strtoll with base 0), and in
// [least, most].
inline CLI::Validator integerIn(long long least, long long most = INT64_MAX) {
  return CLI::Validator(
      [least, most](std::string& input) -> std::string {
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(input.c_str(), &end, 0);
        if (end == input.c_str() || *end != '\0') return {};  // not an integer: CLI11's conversion says so
        if (errno == ERANGE || value < least || value > most)
          return most == INT64_MAX && errno != ERANGE ? fmt::format("{} is not an integer >= {}", input, least)
                                                      : fmt::format("{} is not an integer from {} to {}", input, least,
                                                                    most);
        return {};
      },
      most == INT64_MAX ? fmt::format("INT >= {}", least) : fmt::format("INT in [{}, {}]", least, most));
}
inline CLI::Validator integerAtLeast(long long least) { return integerIn(least); }

// Bytes in a few digits ("23.4 GB").
inline std::string bytesText(long double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  int u = 0;
  while (bytes >= 1000 && u < 8) bytes /= 1000, ++u;
  return fmt::format("{:.3g} {}", static_cast<double>(bytes), units[u]);
}

// The memory one process may use on this machine: its physical memory, or less under a limit on
// the address space (ulimit -v).
inline long double usableMemoryBytes() {
  long double bytes = static_cast<long double>(sysconf(_SC_PHYS_PAGES)) * static_cast<long double>(sysconf(_SC_PAGE_SIZE));
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min(bytes, static_cast<long double>(limit.rlim_cur));
  return bytes;
}

// Refuses a particle count before any particle is made, when it does not fit a std::int64_t or
// when the rank with the largest share would need more than this machine's memory: about
// `bytes_per_particle` for each of its particles (the particles and the trees' copies of them)
// plus `bytes_per_particle_everywhere` for each of all n (what every rank holds whole).
inline void requireMemoryFor(const char* sample, const std::string& what, long double n, int ranks,
                             long double bytes_per_particle, long double bytes_per_particle_everywhere = 0) {
  if (!(n <= static_cast<long double>(INT64_MAX)))
    throw grove::Error(sample, fmt::format("{}: {:.4g} particles do not fit a 64-bit count", what,
                                           static_cast<double>(n)));
  const long double share = std::ceil(n / ranks);
  const long double need = share * bytes_per_particle + n * bytes_per_particle_everywhere;
  const long double have = usableMemoryBytes();
  if (need > have)
    throw grove::Error(sample, fmt::format("{}: {:.0f} particles on each of {} rank{} need about {} a rank, more than "
                                           "the {} this machine offers a process",
                                           what, static_cast<double>(share), ranks, ranks == 1 ? "" : "s",
                                           bytesText(need), bytesText(have)));
}

// The steps of a fixed-step run from `time` to t_end: refuses one that would take no step (t_end
// reached, or NaN) or more than 2^53 (an overflow of the count, or dt = 1e-300). `where` says what
// the run starts from ("the start", or the checkpoint).
inline std::int64_t fixedSteps(const char* sample, double time, double t_end, double dt, const std::string& where) {
  const double steps = (t_end - time) / dt;
  if (!std::isfinite(steps) || steps > 9007199254740992.0)
    throw grove::Error(sample, fmt::format("--t-end {} with --dt {} makes {:.3g} steps from {} (t = {}), more than "
                                           "2^53: not a run",
                                           t_end, dt, steps, where, time));
  const auto n = static_cast<std::int64_t>(std::llround(steps));
  if (n <= 0)
    throw grove::Error(sample, fmt::format("no step left to run from {} (t = {}): --t-end {} with --dt {}", where,
                                           time, t_end, dt));
  return n;
}

// Refuses a run of adaptive steps that would take none (t_end reached, or --max-steps already
// taken by the checkpoint's run).
inline void requireStepsLeft(const char* sample, bool more, double time, double t_end, std::int64_t step,
                             int max_steps, const std::string& where) {
  if (more) return;
  throw grove::Error(sample, fmt::format("no step left to run from {} (t = {}, step {}): --t-end {}{}", where, time,
                                         step, t_end,
                                         max_steps > 0 ? fmt::format(", --max-steps {}", max_steps) : std::string()));
}

// ---- files the samples write alone (rank 0) --------------------------------------------------------

// After writing a text file (an ASCII snapshot, a log): flushes it, or closes it when `close`, and
// stops the run naming the file and the system's reason when the disk refused any of it (a full
// disk shows only here: the writes before went to the buffer).
inline void requireWritten(std::FILE* f, const std::string& path, const char* sample, bool close = true) {
  errno = 0;
  bool failed = std::ferror(f) != 0;
  failed = (close ? std::fclose(f) : std::fflush(f)) != 0 || failed;
  if (failed)
    throw grove::Error(sample, fmt::format("writing {} failed: {}", path, std::strerror(errno ? errno : EIO)));
}

// ---- parameter files ------------------------------------------------------------------------------

// Call first, before the options are added (the defaults are captured as options are made).
inline void enableParameterFile(CLI::App& app) {
  app.option_defaults()->always_capture_default();  // the defaults too in the snapshots' /Parameters
  app.set_config("--config", "", "parameter file (TOML or INI, 'theta = 0.6' lines; options on the command line "
                                 "override it)");
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is an error, not ignored
}

// CLI11_PARSE, with clearer words where CLI11 reads a parameter file it cannot use: a file that is
// not text (CLI11 would print its bytes), a section such as [run] (CLI11 says "INI was not able to
// parse run.++"). Returns the exit code when the run stops here, or nothing to go on.
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    const CLI::Option* config = app.get_option("--config");
    const bool from_file = dynamic_cast<const CLI::ConfigError*>(&e) != nullptr && config->count() > 0;
    if (from_file) {
      const std::string path = config->results().empty() ? std::string() : config->results().back();
      std::ifstream in(path, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const auto odd = std::find_if(bytes.begin(), bytes.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u == 0 || u == 0x7f || (u < 0x20 && c != '\n' && c != '\r' && c != '\t');
      });
      const std::string marker = "INI was not able to parse ";
      if (odd != bytes.end()) {
        message = fmt::format("--config {}: not a text parameter file (byte {} is 0x{:02x}); give a TOML or INI file "
                              "of 'option = value' lines",
                              path, odd - bytes.begin(), static_cast<unsigned char>(*odd));
      } else if (message.starts_with(marker) && message.ends_with(".++")) {
        const std::string section = message.substr(marker.size(), message.size() - marker.size() - 3);
        message = fmt::format("--config {}: section [{}] is not one of {}'s; its options take no section (write "
                              "'option = value' lines at the top of the file)",
                              path, section, std::filesystem::path(app.get_name()).filename().string());
      } else if (message.starts_with(marker)) {
        message = fmt::format("--config {}: '{}' is not an option of this program ({})", path,
                              message.substr(marker.size()), message);
      }
    }
    // Whatever CLI11 quotes of the input, printable: control bytes as \xNN.
    std::string shown;
    for (char c : message) {
      const auto u = static_cast<unsigned char>(c);
      shown += (u < 0x20 && c != '\n') || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, c);
    }
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", shown.c_str());
    return e.get_exit_code();
  }
}

// The parameter file's text (when --config named one) and every option's value in effect, as
// TOML: what a snapshot records of the run that wrote it.
inline std::string parametersInEffect(const CLI::App& app) {
  std::string text;
  const CLI::Option* config = app.get_option("--config");
  if (config->count() > 0) {
    const std::string path = config->as<std::string>();
    std::ifstream in(path);
    std::ostringstream file;
    file << in.rdbuf();
    text += "# parameter file " + path + ":\n" + file.str() + "\n";
  }
  return text + "# options in effect (the command line over the file):\n" + app.config_to_str(true, false);
}

// --snapshot-format: HDF5 by default where grove has HDF5 (at any rank count: with a serial
// library rank 0 writes every rank's rows), ASCII otherwise; HDF5 asked for where grove has none
// stops the run before it starts.
inline void chooseSnapshotFormat(const CLI::App& app, std::string& format, const char* sample) {
  const bool hdf5_here = GROVE_HAS_HDF5;
  if (app.get_option("--snapshot-format")->count() == 0 && !hdf5_here) format = "ascii";
  if (format == "hdf5" && !hdf5_here)
    throw grove::Error(sample, "--snapshot-format hdf5: this grove was built without HDF5 (install "
                               "libhdf5-openmpi-dev and configure again); use --snapshot-format ascii");
}

struct RestartOptions {
  std::int64_t checkpoint_every = 0;  // steps; 0: none
  std::string restart;                // "latest", a checkpoint's path, or empty: a fresh start
};

inline void addRestartOptions(CLI::App& app, RestartOptions& r) {
  app.add_option("--checkpoint-every", r.checkpoint_every,
                 "steps between restart files <output-dir>/restart_<step>.ckpt (0: none; the last two are kept)")
      ->check(integerAtLeast(0));
  app.add_option("--restart", r.restart,
                 "go on from 'latest' (the newest restart file in --output-dir) or from a restart file's path: "
                 "bitwise the run that never stopped, at the same rank count");
}

// The options that shape a run, as its checkpoints record them ("name = value" lines): on a
// restart each option that differs from the checkpoint's is refused when it fixes the particles
// (their number, the initial conditions) and reported and taken otherwise (dt, t-end, ...), as
// GADGET does with its parameter file.
class RunOptions {
 public:
  template <class T>
  RunOptions& fixed(std::string name, const T& value) {
    return add(std::move(name), fmt::format("{}", value), true);
  }
  template <class T>
  RunOptions& changeable(std::string name, const T& value) {
    return add(std::move(name), fmt::format("{}", value), false);
  }
  // What a checkpoint keeps (Checkpoint::value("options", text)).
  std::string text() const {
    std::string t;
    for (const Entry& e : entries_) t += e.name + " = " + e.value + "\n";
    return t;
  }
  // After a restore from `path`: `saved`, its checkpoint's text, against these options.
  void checkRestart(const std::string& saved, const std::string& path, const char* sample) const {
    std::map<std::string, std::string> then;
    std::istringstream in(saved);
    for (std::string line; std::getline(in, line);)
      if (const auto at = line.find(" = "); at != std::string::npos) then[line.substr(0, at)] = line.substr(at + 3);
    std::string refused;
    for (const Entry& e : entries_) {
      const auto it = then.find(e.name);
      if (it == then.end() || it->second == e.value) continue;
      if (e.fixed)
        refused += fmt::format("\n  --{} {} here, {} in the checkpoint", e.name, e.value, it->second);
      else
        grove::log("restart: --{} {} taken (the checkpoint's run had {})", e.name, e.value, it->second);
    }
    if (!refused.empty())
      throw grove::Error(sample, fmt::format("--restart {}: a restart cannot change the particles or their initial "
                                             "conditions; give the checkpoint's values (or start afresh):{}",
                                             path, refused));
  }

 private:
  struct Entry {
    std::string name, value;
    bool fixed;
  };
  RunOptions& add(std::string name, std::string value, bool fixed) {
    entries_.push_back({std::move(name), std::move(value), fixed});
    return *this;
  }
  std::vector<Entry> entries_;
};

// The restore --restart asks for (nothing on a fresh start), logged, and the run's options checked
// against the checkpoint's (RunOptions); --restart latest with no checkpoint stops the run.
// `recorded` is the checkpoint's record of the options (Checkpoint::value("options", recorded)):
// the restore fills it, and it holds these options again afterwards, for the next checkpoints.
inline std::optional<grove::io::RestartInfo> restoreIfAsked(grove::io::Checkpoint& checkpoint,
                                                            const RestartOptions& r, const RunOptions& options,
                                                            std::string& recorded, const char* sample) {
  recorded = options.text();
  if (r.restart.empty()) return std::nullopt;
  std::optional<grove::io::RestartInfo> info =
      r.restart == "latest" ? checkpoint.restoreLatest() : checkpoint.restore(r.restart);
  if (!info) throw grove::Error(sample, fmt::format("--restart latest: no checkpoint {}_*.ckpt", checkpoint.prefix()));
  grove::log("restarted from {}: step {}, written by {} ranks{}", info->path, info->step, info->writer_ranks,
             info->same_rank_count ? "" : " (decomposed again for this rank count)");
  options.checkRestart(recorded, info->path, sample);
  recorded = options.text();
  return info;
}

// A log's text for a restart from `step`: the header, then the rows of the old log whose first
// column (the step) is at most `step` (later rows were written by a run that went on past its last
// checkpoint). step 0: the header alone, a fresh log.
inline std::string logRowsUpTo(const std::filesystem::path& path, const std::string& header, std::int64_t step) {
  std::string rows = header + "\n";
  if (step <= 0) return rows;
  std::ifstream in(path);
  std::string line;
  for (bool first = true; std::getline(in, line); first = false)
    if (!first && std::atoll(line.c_str()) <= step) rows += line + "\n";
  return rows;
}

// Writes a checkpoint after `step` when --checkpoint-every says so.
inline void checkpointIfDue(grove::io::Checkpoint& checkpoint, const RestartOptions& r, std::int64_t step) {
  if (r.checkpoint_every <= 0 || step % r.checkpoint_every != 0) return;
  const auto start = std::chrono::steady_clock::now();
  const std::string path = checkpoint.write(step);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double megabytes = static_cast<double>(std::filesystem::file_size(path)) * 1e-6;
  grove::log("checkpoint {}: {:.1f} MB in {:.3f} s ({:.0f} MB/s)", path, megabytes, seconds, megabytes / seconds);
}

}  // namespace samples
