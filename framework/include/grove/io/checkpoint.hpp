#pragma once
/// @file
/// grove::io::Checkpoint: the whole state a run needs to go on, in one file written by all ranks
/// (grove::SharedFile: MPI-IO, no gather), so that a run stopped after step k and restarted gives
/// bitwise the particles of the run that never stopped. The program names its state once; the
/// same list writes and restores, so the two cannot drift apart:
/// @code
///   grove::io::Checkpoint checkpoint("out/restart");          // files out/restart_<step>.ckpt
///   checkpoint.particles("bodies", bodies).domain("domain", dinfo)
///             .value("time", time).value("step", step).perRankValue("rng", engine);
///   if (auto from = checkpoint.restoreLatest()) grove::log("restarted from {}", from->path);
///   ...
///   if (step % 100 == 0) checkpoint.write(step);               // collective
/// @endcode
///
/// What is saved, and what comes back at another rank count:
/// @verbatim
///   particles     each rank's particles, raw bytes, in its order (FP trivially copyable). At the
///                 writer's rank count each rank gets its own back, in order; at another, each
///                 rank a contiguous share of all of them in rank order (then decompose and
///                 exchange, as after reading a snapshot).
///   domain        DomainInfo's decomposition state (DomainState: cuts, sampling draws, grid,
///                 samples). Restored at the writer's rank count only; elsewhere left as is.
///   value         a value that every rank holds alike (checked when writing): time, step, dt,
///                 energies; trivially copyable, std::string, a std::vector of trivially copyable,
///                 or a type with stream operators. Restored at any rank count.
///   perRankValue  each rank's own value (a random engine per rank). Restored at the writer's
///                 rank count only; RestartInfo::same_rank_count says whether that happened.
/// @endverbatim
///
/// Files are binary, for restarting on the same kind of machine with the same program (the byte
/// order and each record's type and size are checked, not converted). A checkpoint is written to
/// "<file>.tmp", synced, read back (its size and every checksum) and only then renamed, so a crash
/// or a full disk while writing leaves the previous ones; older ones beyond the last `keep` (2) are
/// removed only after that. A write that fails on any rank (a full disk) throws the same
/// grove::Error on every rank, naming the file and the system's reason. Every block carries a
/// checksum, checked at any rank count; a truncated, damaged, foreign or mismatched file is
/// refused with the file and the reason named, and nothing is changed. For snapshots that other
/// tools read, see grove/io/snapshot.hpp.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/io/checksum.hpp"
#include "grove/particles/particle_system.hpp"

namespace grove::io {

/// Where a restore came from: what Checkpoint::restore and Checkpoint::restoreLatest return.
struct RestartInfo {
  std::string path;  ///< the checkpoint file restored
  std::int64_t step = 0;  ///< the step it was written at (Checkpoint::write's argument)
  int writer_ranks = 0;  ///< the rank count that wrote it
  bool same_rank_count = true;  ///< false: the domain and per-rank values were left as they were
};

namespace detail {

// Bytes in, bytes out, for the file's directory and the decomposition state. A reader that runs
// off its end throws: a file that passed its checksums but does not parse was written by
// something else.
class ByteWriter {
 public:
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void put(const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void putVector(std::span<const T> values) {
    put<std::uint64_t>(values.size());
    const auto* p = reinterpret_cast<const std::byte*>(values.data());
    bytes_.insert(bytes_.end(), p, p + values.size_bytes());
  }
  void putString(const std::string& s) { putVector(std::span<const char>(s.data(), s.size())); }
  std::vector<std::byte>& bytes() { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

class ByteReader {
 public:
  ByteReader(std::span<const std::byte> bytes, std::string what) : bytes_(bytes), what_(std::move(what)) {}
  template <class T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  template <class T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> getVector() {
    const auto n = get<std::uint64_t>();
    if (n > bytes_.size() / (sizeof(T) ? sizeof(T) : 1)) overrun();
    std::vector<T> values(static_cast<std::size_t>(n));
    if (n) std::memcpy(values.data(), take(n * sizeof(T)), n * sizeof(T));
    return values;
  }
  std::string getString() {
    const std::vector<char> chars = getVector<char>();
    return {chars.begin(), chars.end()};
  }
  bool atEnd() const { return offset_ == bytes_.size(); }

 private:
  const std::byte* take(std::size_t n) {
    if (n > bytes_.size() - offset_) overrun();
    const std::byte* p = bytes_.data() + offset_;
    offset_ += n;
    return p;
  }
  [[noreturn]] void overrun() const { throw Error("Checkpoint", fmt::format("{} ends early (malformed)", what_)); }

  std::span<const std::byte> bytes_;
  std::size_t offset_ = 0;
  std::string what_;
};

std::vector<std::byte> encodeDomainState(const DomainState& state);
DomainState decodeDomainState(std::span<const std::byte> bytes);

template <class T>
concept Streamable = requires(std::ostream& out, std::istream& in, T& value) {
  out << value;
  in >> value;
};
template <class T>
struct IsVectorOfTrivial : std::false_type {};
template <class E>
  requires std::is_trivially_copyable_v<E>
struct IsVectorOfTrivial<std::vector<E>> : std::true_type {};

// A value's bytes and back: raw for trivially copyable types, element bytes for a vector of
// them, characters for a string, text for types with stream operators (std::mt19937_64's state).
template <class T>
std::vector<std::byte> encodeValue(const T& value) {
  std::vector<std::byte> bytes;
  auto append = [&](const void* p, std::size_t n) {
    bytes.insert(bytes.end(), static_cast<const std::byte*>(p), static_cast<const std::byte*>(p) + n);
  };
  if constexpr (std::is_trivially_copyable_v<T>) append(&value, sizeof(T));
  else if constexpr (IsVectorOfTrivial<T>::value || std::is_same_v<T, std::string>)
    append(value.data(), value.size() * sizeof(typename T::value_type));
  else {
    std::ostringstream out;
    out.precision(17);
    out << value;
    const std::string text = out.str();
    append(text.data(), text.size());
  }
  return bytes;
}
template <class T>
T decodeValue(std::span<const std::byte> bytes, const std::string& name) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    require(bytes.size() == sizeof(T), "Checkpoint", "value '{}' holds {} bytes, its type has {}", name, bytes.size(),
            sizeof(T));
    T value;
    std::memcpy(&value, bytes.data(), sizeof(T));
    return value;
  } else if constexpr (IsVectorOfTrivial<T>::value || std::is_same_v<T, std::string>) {
    using E = typename T::value_type;
    require(bytes.size() % sizeof(E) == 0, "Checkpoint", "value '{}' holds {} bytes, not whole elements of {}", name,
            bytes.size(), sizeof(E));
    T value(bytes.size() / sizeof(E), E{});
    if (!bytes.empty()) std::memcpy(value.data(), bytes.data(), bytes.size());
    return value;
  } else {
    std::istringstream in(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    T value;
    in >> value;
    require(!in.fail(), "Checkpoint", "value '{}' does not read back from its text", name);
    return value;
  }
}

template <class T>
constexpr bool kCheckpointable = std::is_trivially_copyable_v<T> || IsVectorOfTrivial<T>::value ||
                                 std::is_same_v<T, std::string> || Streamable<T>;

}  // namespace detail

/// Collective over psys.comm(): one checksum of every rank's particles, their bytes in rank order.
/// Runs whose checksums agree hold (but for a 2^-64 chance) bitwise the same particles in the same
/// order on the same ranks: how a program shows that its restart reproduced the run that never
/// stopped. Padding bytes inside FP count too: compare types without padding, as the samples' are.
template <class FP>
std::uint64_t particleChecksum(const ParticleSystem<FP>& psys) {
  const std::vector<std::uint64_t> each = psys.comm().allgather(detail::checksum64(std::as_bytes(psys.particles())));
  return detail::checksum64(std::as_bytes(std::span<const std::uint64_t>(each)));
}

/// A run's named state (particles, domain, values), written to and restored from one checkpoint
/// file per step by every rank of its communicator (see the file's description). Records are
/// named once, by reference: the objects must outlive the Checkpoint. write, restore,
/// restoreLatest and list are collective over the communicator; failures throw grove::Error (the
/// same on every rank for the collective calls).
class Checkpoint {
 public:
  static constexpr int kDefaultKeep = 2;  ///< checkpoints kept by default

  /// Checkpoints are the files `<prefix>_<step, 9 digits>.ckpt`; prefix's directory is created when
  /// the first is written. keep: how many to keep (the newest by step; at least 1). Not collective;
  /// nothing is touched on disk. Throws grove::Error for an empty prefix or keep < 1.
  explicit Checkpoint(std::string prefix, Comm comm = Comm::world(), int keep = kDefaultKeep);

  /// The state, named once (names are unique and not empty, else grove::Error; see the file's
  /// description for what each restores). particles: psys's particles as raw bytes (FP trivially
  /// copyable); restored at any rank count. Returns *this, for chaining.
  template <class FP>
  Checkpoint& particles(std::string name, ParticleSystem<FP>& psys) {
    static_assert(std::is_trivially_copyable_v<FP>, "grove::io::Checkpoint: particles are saved as their bytes, so FP "
                                                    "must be trivially copyable");
    Entry e{std::move(name), Kind::kParticles, typeid(FP).name(), sizeof(FP), {}, {}};
    e.save = [&psys](std::vector<std::byte>&) {
      return Block{std::as_bytes(std::span<const FP>(psys.particles())), psys.size()};
    };
    e.prepare = [&psys](std::vector<std::byte> bytes, std::uint64_t count) -> std::function<void()> {
      std::vector<FP> restored(static_cast<std::size_t>(count));  // FP's own alignment, not the bytes'
      if (count) std::memcpy(static_cast<void*>(restored.data()), bytes.data(), count * sizeof(FP));
      return [&psys, restored = std::move(restored)] {
        psys.setNumberOfParticleLocal(0);
        psys.add(std::span<const FP>(restored));
      };
    };
    return add(std::move(e));
  }
  /// dinfo's decomposition state (DomainState), restored at the writer's rank count only. Names as
  /// for particles(); returns *this.
  Checkpoint& domain(std::string name, DomainInfo& dinfo);
  /// A value that every rank holds alike (write checks it): trivially copyable, std::string, a
  /// std::vector of trivially copyable, or a type with stream operators. Restored at any rank count.
  /// Names as for particles(); returns *this. A trivially copyable struct is saved and compared
  /// byte for byte, so it must have no padding bytes (they hold whatever each rank's memory held,
  /// and the check would then fail at random): order or widen its members, and a static_assert on
  /// its sizeof keeps it so.
  template <class T>
  Checkpoint& value(std::string name, T& v) {
    return addValue(std::move(name), v, Kind::kSame);
  }
  /// Each rank's own value (a random engine per rank), of the types value() takes. Restored at the
  /// writer's rank count only. Names as for particles(); returns *this.
  template <class T>
  Checkpoint& perRankValue(std::string name, T& v) {
    return addValue(std::move(name), v, Kind::kPerRank);
  }

  /// Collective: writes the named state as the checkpoint of `step` (atomically: under a temporary
  /// name, synced, verified, renamed; then older ones beyond `keep` are removed). Returns its path.
  /// Needs the same step >= 0 on every rank and every value() alike on every rank. On failure every
  /// rank throws the same grove::Error and the checkpoints on disk are as before.
  std::string write(std::int64_t step);
  /// Collective: restores the named state from a checkpoint. Throws on every rank, changing
  /// nothing, when the file is missing, truncated, damaged (a checksum of any block of a named
  /// record, at any rank count), foreign, or lacks or mistypes a named record. Records in the file
  /// that are not named are ignored.
  RestartInfo restore(const std::string& path);
  /// Collective: restores from the newest checkpoint of this prefix; one that is refused is named
  /// in a warning and the one before it is tried. Nothing found: nullopt (a fresh start). Throws
  /// grove::Error when checkpoints exist but every one is refused.
  std::optional<RestartInfo> restoreLatest();
  /// Collective: the checkpoints of this prefix on disk (as rank 0 lists them), oldest first by
  /// step.
  std::vector<std::string> list() const;
  /// The file of the checkpoint of `step`: `<prefix>_<step, 9 digits>.ckpt`. Not collective; throws
  /// grove::Error for a negative step.
  std::string pathFor(std::int64_t step) const;
  /// The file prefix given to the constructor.
  const std::string& prefix() const { return prefix_; }

 private:
  enum class Kind : std::uint8_t { kSame = 1, kPerRank = 2, kParticles = 3 };
  struct Block {
    std::span<const std::byte> bytes;  // into the saved object, or into the scratch given to save
    std::uint64_t elements = 0;
  };
  struct Entry {
    std::string name;
    Kind kind;
    std::string type;
    std::uint64_t element_bytes;
    std::function<Block(std::vector<std::byte>& scratch)> save;
    // Decodes verified bytes (may throw: nothing is changed yet); the returned call changes the
    // object and does not fail.
    std::function<std::function<void()>(std::vector<std::byte> bytes, std::uint64_t elements)> prepare;
  };

  template <class T>
  Checkpoint& addValue(std::string name, T& v, Kind kind) {
    static_assert(detail::kCheckpointable<T>, "grove::io::Checkpoint: a value is trivially copyable, a std::string, a "
                                              "std::vector of trivially copyable elements, or has << and >>");
    Entry e{std::move(name), kind, typeid(T).name(), 1, {}, {}};
    e.save = [&v](std::vector<std::byte>& scratch) {
      scratch = detail::encodeValue(v);
      return Block{scratch, scratch.size()};
    };
    e.prepare = [&v, name = e.name](std::vector<std::byte> bytes, std::uint64_t) -> std::function<void()> {
      return [&v, decoded = detail::decodeValue<T>(bytes, name)]() mutable { v = std::move(decoded); };
    };
    return add(std::move(e));
  }
  Checkpoint& add(Entry entry);

  std::string prefix_;
  Comm comm_;
  int keep_;
  std::vector<Entry> entries_;
};

}  // namespace grove::io
