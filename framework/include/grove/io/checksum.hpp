#pragma once
/// @file
/// What grove's files share (compiled in grove, checkpoint.cpp): the 64-bit checksum (word-wise
/// multiply-xor; it detects truncation and flipped bits, not an adversary) of every block of a
/// checkpoint (grove/io/checkpoint.hpp) and, row by row, of every table of a snapshot
/// (grove/io/snapshot.hpp); the rename that publishes a file written under a temporary name, and
/// the removal of one that a failed write leaves.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace grove {
class Comm;
}

namespace grove::io::detail {

std::uint64_t checksum64(std::span<const std::byte> bytes) noexcept;

// The same checksum fed in pieces, so that a block is checked without holding it whole (a
// restore at another rank count checks every writer's blocks): the pieces of total_bytes in
// order give checksum64 of their concatenation.
class Checksum64 {
 public:
  explicit Checksum64(std::uint64_t total_bytes) noexcept;
  void add(std::span<const std::byte> bytes) noexcept;
  std::uint64_t value() const noexcept;

 private:
  void mix(std::uint64_t word) noexcept;
  std::uint64_t h_;
  std::uint64_t pending_ = 0;  // the bytes of an unfinished word, in memory order
  std::size_t pending_bytes_ = 0;
};

// Renames `from` over `to` (atomically, on one file system) and syncs their directory; the
// problem, naming both, if the rename failed.
std::optional<std::string> renameDurably(const std::string& from, const std::string& to);

// Collective over comm, after a write's failure that every rank agreed on: rank 0 removes the
// unpublished temporary file (failing to remove it changes nothing), and no rank returns before it
// is gone. A rank that reached its exit first could end the job (MPI_Abort on the error) with rank
// 0 not yet past the removal, and the partial file would stay.
void removeUnpublished(const Comm& comm, const std::string& temporary);

}  // namespace grove::io::detail
