#pragma once
/// @file
/// grove::SharedFile: one file that every rank of a communicator opens together and writes or reads
/// at its own byte offsets (MPI-IO, so a parallel file system sees one writer per rank and no
/// gather; a plain file in the serial build). Collective calls throw on every rank, with the same
/// message (grove/comm/agree.hpp), when any rank failed, so a failure never leaves ranks waiting;
/// independent calls return the problem for the caller to agree on.
///
///     grove::SharedFile file(comm, "state.bin", grove::SharedFile::Mode::kCreate);
///     file.writeAtAll(my_offset, my_bytes);   // collective
///     file.close();                           // collective: synced to the disk, errors reported
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "grove/comm/agree.hpp"
#include "grove/comm/backend.hpp"
#include "grove/comm/comm.hpp"

namespace grove {

/// One file that every rank of a communicator opens together and writes or reads at its own byte
/// offsets. Not copyable. Calls on a closed file throw grove::Error.
class SharedFile {
 public:
  /// How the constructor opens the file: kCreate creates it or truncates it, kRead opens an
  /// existing file for reading.
  enum class Mode { kCreate, kRead };

  /// Collective over comm (same path and mode on every rank). kCreate creates or truncates path;
  /// kRead opens it for reading. Throws grove::Error on every rank when any rank could not.
  SharedFile(const Comm& comm, std::string path, Mode mode) : comm_(comm), path_(std::move(path)) {
    std::string problem;
    file_ = detail::fileOpen(comm_.handle(), path_.c_str(),
                             mode == Mode::kCreate ? detail::FileMode::kCreate : detail::FileMode::kRead, &problem);
    try {
      agree(problem, mode == Mode::kCreate ? "cannot create it" : "cannot open it");
    } catch (...) {  // another rank failed: no destructor runs after a constructor throws
      detail::fileAbandon(file_);
      throw;
    }
  }
  SharedFile(const SharedFile&) = delete;             ///< not copyable
  SharedFile& operator=(const SharedFile&) = delete;  ///< not copyable
  /// Closes a file still open without reporting errors (for unwinding past an open file, every
  /// rank throwing together through agree); call close() to have them reported.
  ~SharedFile() { detail::fileAbandon(file_); }

  /// The path given to the constructor.
  const std::string& path() const { return path_; }

  /// Collective: this rank's bytes at offset (any size, also none), each rank writing alone, then
  /// agreed on (backend.hpp says why no collective write). Throws grove::Error on every rank when
  /// any rank's write failed.
  void writeAtAll(std::uint64_t offset, std::span<const std::byte> bytes) {
    agree(detail::fileWriteAt(*open(), offset, bytes.data(), bytes.size()), "writing failed");
  }
  /// Independent: writes this rank's bytes at offset; returns the problem ("path: reason"), if
  /// any, for the caller to agree on (agreeOnFailure).
  std::optional<std::string> writeAt(std::uint64_t offset, std::span<const std::byte> bytes) {
    return problemOf(detail::fileWriteAt(*open(), offset, bytes.data(), bytes.size()));
  }
  /// Independent: reads bytes.size() bytes at offset into bytes; returns the problem
  /// ("path: reason"), if any, for the caller to agree on.
  std::optional<std::string> readAt(std::uint64_t offset, std::span<std::byte> bytes) {
    return problemOf(detail::fileReadAt(*open(), offset, bytes.data(), bytes.size()));
  }
  /// Independent: the file's size in bytes. Throws grove::Error (this rank alone) when it cannot
  /// be read.
  std::uint64_t size() {
    std::uint64_t bytes = 0;
    if (std::string problem = detail::fileSize(*open(), &bytes); !problem.empty())
      throw Error("SharedFile", fmt::format("{}: {}", path_, problem));
    return bytes;
  }
  /// Collective: synced to the disk and closed; throws grove::Error on every rank if any rank's
  /// part failed. The file is closed either way.
  void close() {
    detail::FileHandle* file = open();
    file_ = nullptr;
    agree(detail::fileClose(file), "closing failed (what was written may not be on the disk)");
  }

 private:
  detail::FileHandle* open() const {
    if (!file_) throw Error("SharedFile", fmt::format("{} is closed", path_));
    return file_;
  }
  std::optional<std::string> problemOf(const std::string& problem) const {
    if (problem.empty()) return std::nullopt;
    return fmt::format("{}: {}", path_, problem);
  }
  void agree(const std::string& problem, const char* what) const {
    std::optional<std::string> mine;
    if (!problem.empty()) mine = fmt::format("{}: {} ({})", path_, what, problem);
    agreeOnFailure(comm_, mine, "SharedFile");
  }

  Comm comm_;
  std::string path_;
  detail::FileHandle* file_ = nullptr;
};

}  // namespace grove
