#pragma once
// What the samples' command lines share: a parameter file (--config, TOML or INI through CLI11;
// the command line overrides it, a misspelt key or a bad value stops the run naming the option),
// the text a snapshot records of the run that wrote it, and the restart options
// (grove/io/checkpoint.hpp).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "grove/config.hpp"
#include "grove/io/checkpoint.hpp"
#if GROVE_HAS_HDF5
#include "grove/io/hdf5_file.hpp"
#endif
#include "grove/runtime/runtime.hpp"

namespace samples {

// Call first, before the options are added (the defaults are captured as options are made).
inline void enableParameterFile(CLI::App& app) {
  app.option_defaults()->always_capture_default();  // the defaults too in the snapshots' /Parameters
  app.set_config("--config", "", "parameter file (TOML or INI, 'theta = 0.6' lines; options on the command line "
                                 "override it)");
  app.allow_config_extras(CLI::config_extras_mode::error);  // a misspelt key is an error, not ignored
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

// --snapshot-format: HDF5 by default where grove can write it from this many ranks (a serial
// HDF5 library serves one rank), ASCII otherwise; HDF5 asked for where it cannot be written stops
// the run before it starts.
inline void chooseSnapshotFormat(const CLI::App& app, std::string& format, int ranks, const char* sample) {
#if GROVE_HAS_HDF5
  const bool hdf5_here = ranks == 1 || grove::io::Hdf5File::parallel();
#else
  const bool hdf5_here = false;
  static_cast<void>(ranks);
#endif
  if (app.get_option("--snapshot-format")->count() == 0 && !hdf5_here) format = "ascii";
  if (format == "hdf5" && !hdf5_here)
    throw grove::Error(sample, GROVE_HAS_HDF5 ? "--snapshot-format hdf5: this grove's HDF5 library is serial and "
                                                "serves one rank; use --snapshot-format ascii, or build grove with "
                                                "libhdf5-openmpi-dev"
                                              : "--snapshot-format hdf5: this grove was built without HDF5 (install "
                                                "libhdf5-openmpi-dev and configure again); use --snapshot-format ascii");
}

struct RestartOptions {
  std::int64_t checkpoint_every = 0;  // steps; 0: none
  std::string restart;                // "latest", a checkpoint's path, or empty: a fresh start
};

inline void addRestartOptions(CLI::App& app, RestartOptions& r) {
  app.add_option("--checkpoint-every", r.checkpoint_every,
                 "steps between restart files <output-dir>/restart_<step>.ckpt (0: none; the last two are kept)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--restart", r.restart,
                 "go on from 'latest' (the newest restart file in --output-dir) or from a restart file's path: "
                 "bitwise the run that never stopped, at the same rank count");
}

// The restore --restart asks for (nothing on a fresh start), logged; --restart latest with no
// checkpoint stops the run.
inline std::optional<grove::io::RestartInfo> restoreIfAsked(grove::io::Checkpoint& checkpoint,
                                                            const RestartOptions& r, const char* sample) {
  if (r.restart.empty()) return std::nullopt;
  std::optional<grove::io::RestartInfo> info =
      r.restart == "latest" ? checkpoint.restoreLatest() : checkpoint.restore(r.restart);
  if (!info) throw grove::Error(sample, fmt::format("--restart latest: no checkpoint {}_*.ckpt", checkpoint.prefix()));
  grove::log("restarted from {}: step {}, written by {} ranks{}", info->path, info->step, info->writer_ranks,
             info->same_rank_count ? "" : " (decomposed again for this rank count)");
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
