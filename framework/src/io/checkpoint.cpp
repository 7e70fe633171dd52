// grove::io::Checkpoint's file (grove/io/checkpoint.hpp):
//
//   [0, 64)          preamble: "GROVECKP", format version, byte-order mark, the file's length,
//                    where the directory lies and its checksum, the step
//   [64, D)          data, rank by rank: rank 0's block of every record, then rank 1's, ...
//   [D, D + d)       directory: the writer's rank count; per record its name, kind, type and
//                    element size, and per rank its block's offset, bytes, elements and checksum
//   [end - 8, end)   "GROVEEND"
//
// Rank 0 writes the preamble, the directory and the end mark; every rank writes its own blocks in
// one collective call per record. The length in the preamble and the end mark catch truncation,
// the checksums catch damage.
#include "grove/io/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <filesystem>
#include <map>
#include <utility>

#include <fcntl.h>
#include <unistd.h>

#include "grove/comm/agree.hpp"
#include "grove/comm/shared_file.hpp"
#include "grove/runtime/runtime.hpp"

namespace grove::io {

namespace {

constexpr char kMagic[8] = {'G', 'R', 'O', 'V', 'E', 'C', 'K', 'P'};
constexpr char kEndMark[8] = {'G', 'R', 'O', 'V', 'E', 'E', 'N', 'D'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kByteOrderMark = 0x01020304;
constexpr const char* kSuffix = ".ckpt";

struct Preamble {
  char magic[8];
  std::uint32_t version;
  std::uint32_t byte_order;
  std::uint64_t file_bytes;
  std::uint64_t directory_offset;
  std::uint64_t directory_bytes;
  std::uint64_t directory_checksum;
  std::int64_t step;
  std::uint64_t reserved;
};
static_assert(sizeof(Preamble) == 64 && std::is_trivially_copyable_v<Preamble>);

// One rank's block of one record.
struct BlockInfo {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t elements = 0;
  std::uint64_t checksum = 0;
};

struct Record {
  std::string name;
  std::uint8_t kind = 0;
  std::string type;
  std::uint64_t element_bytes = 0;
  std::vector<BlockInfo> blocks;  // one per writer rank
};

struct Directory {
  int rank_count = 0;
  std::vector<Record> records;
};

std::vector<std::byte> encodeDirectory(const Directory& d) {
  detail::ByteWriter w;
  w.put<std::int32_t>(d.rank_count);
  w.put<std::uint64_t>(d.records.size());
  for (const Record& r : d.records) {
    w.putString(r.name);
    w.put(r.kind);
    w.putString(r.type);
    w.put(r.element_bytes);
    w.putVector(std::span<const BlockInfo>(r.blocks));
  }
  return std::move(w.bytes());
}

Directory decodeDirectory(std::span<const std::byte> bytes, const std::string& path) {
  detail::ByteReader r(bytes, path + "'s directory");
  Directory d;
  d.rank_count = r.get<std::int32_t>();
  const auto count = r.get<std::uint64_t>();
  require(d.rank_count > 0 && count <= bytes.size(), "Checkpoint", "{}: the directory names {} ranks and {} records",
          path, d.rank_count, count);
  for (std::uint64_t i = 0; i < count; ++i) {
    Record rec;
    rec.name = r.getString();
    rec.kind = r.get<std::uint8_t>();
    rec.type = r.getString();
    rec.element_bytes = r.get<std::uint64_t>();
    rec.blocks = r.getVector<BlockInfo>();
    require(rec.blocks.size() == static_cast<std::size_t>(d.rank_count) && rec.element_bytes > 0, "Checkpoint",
            "{}: record '{}' has {} blocks for {} ranks", path, rec.name, rec.blocks.size(), d.rank_count);
    d.records.push_back(std::move(rec));
  }
  require(r.atEnd(), "Checkpoint", "{}: the directory has bytes after its last record", path);
  return d;
}

// Checks a block by reading it back in pieces of this many bytes (memory stays bounded however
// large the block).
constexpr std::uint64_t kCheckPieceBytes = std::uint64_t{8} << 20;

// Whether [b.offset, b.offset + b.bytes) of the file has b's checksum; the read's problem, or
// "checksum" when the bytes differ.
std::optional<std::string> checkBlock(SharedFile& file, const BlockInfo& b, std::vector<std::byte>& piece) {
  detail::Checksum64 sum(b.bytes);
  for (std::uint64_t done = 0; done < b.bytes;) {
    const std::uint64_t n = std::min(b.bytes - done, kCheckPieceBytes);
    piece.resize(static_cast<std::size_t>(n));
    if (auto problem = file.readAt(b.offset + done, piece)) return problem;
    sum.add(piece);
    done += n;
  }
  if (sum.value() != b.checksum) return std::string("checksum");
  return std::nullopt;
}

// Rank 0's check of a file's frame (its size against the preamble, the end mark, the directory's
// checksum); fills preamble and directory_bytes. The problem, naming the file, if any.
std::optional<std::string> readFrame(SharedFile& file, const std::string& path, Preamble& preamble,
                                     std::vector<std::byte>& directory_bytes) {
  const std::uint64_t size = file.size();
  if (size < sizeof(Preamble) + sizeof kEndMark)
    return fmt::format("{} is not a grove checkpoint: {} bytes, shorter than a checkpoint's frame", path, size);
  if (auto p = file.readAt(0, std::as_writable_bytes(std::span(&preamble, 1)))) return p;
  if (std::memcmp(preamble.magic, kMagic, sizeof kMagic) != 0)
    return fmt::format("{} is not a grove checkpoint (it does not begin with GROVECKP)", path);
  if (preamble.byte_order != kByteOrderMark)
    return fmt::format("{} was written on a machine of the other byte order", path);
  if (preamble.version != kFormatVersion)
    return fmt::format("{} has checkpoint format {}; this grove reads format {}", path, preamble.version,
                       kFormatVersion);
  if (size != preamble.file_bytes)
    return fmt::format("{} is truncated or damaged: {} bytes where its preamble says {}", path, size,
                       preamble.file_bytes);
  if (preamble.directory_offset + preamble.directory_bytes + sizeof kEndMark != size)
    return fmt::format("{} is damaged: its directory does not end where the file does", path);
  char end_mark[8];
  directory_bytes.resize(preamble.directory_bytes);
  if (auto p = file.readAt(size - sizeof kEndMark, std::as_writable_bytes(std::span(end_mark)))) return p;
  if (auto p = file.readAt(preamble.directory_offset, directory_bytes)) return p;
  if (std::memcmp(end_mark, kEndMark, sizeof kEndMark) != 0)
    return fmt::format("{} is damaged: it does not end with GROVEEND", path);
  if (detail::checksum64(directory_bytes) != preamble.directory_checksum)
    return fmt::format("{} is damaged: its directory's checksum does not match", path);
  return std::nullopt;
}

std::span<const std::byte> bytesOf(const auto& value) {
  return std::as_bytes(std::span(&value, 1));
}

}  // namespace

namespace detail {

Checksum64::Checksum64(std::uint64_t total_bytes) noexcept : h_(0x9E3779B97F4A7C15ull ^ total_bytes) {}

void Checksum64::mix(std::uint64_t word) noexcept {
  h_ ^= word * 0xBF58476D1CE4E5B9ull;
  h_ = std::rotl(h_, 27) * 0x94D049BB133111EBull;
}

void Checksum64::add(std::span<const std::byte> bytes) noexcept {
  std::size_t i = 0;
  while (pending_bytes_ > 0 && i < bytes.size()) {  // finish a word begun by the last piece
    std::memcpy(reinterpret_cast<std::byte*>(&pending_) + pending_bytes_, bytes.data() + i, 1);
    ++i;
    if (++pending_bytes_ == 8) {
      mix(pending_);
      pending_ = 0;
      pending_bytes_ = 0;
    }
  }
  for (; i + 8 <= bytes.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    mix(word);
  }
  for (; i < bytes.size(); ++i)
    std::memcpy(reinterpret_cast<std::byte*>(&pending_) + pending_bytes_++, bytes.data() + i, 1);
}

std::uint64_t Checksum64::value() const noexcept {
  Checksum64 last = *this;
  last.mix(pending_);  // the tail, zero-padded (a zero word when the bytes end on a word)
  return last.h_ ^ (last.h_ >> 31);
}

std::uint64_t checksum64(std::span<const std::byte> bytes) noexcept {
  Checksum64 sum(bytes.size());
  sum.add(bytes);
  return sum.value();
}

std::optional<std::string> renameDurably(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::rename(from, to, ec);
  if (ec) return fmt::format("{}: renaming {} to it failed: {}", to, from, ec.message());
  // The rename reaches the disk with its directory (best effort: some file systems refuse to sync a
  // directory, and the file itself is already synced).
  const std::filesystem::path parent = std::filesystem::path(to).parent_path();
  const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    static_cast<void>(::fsync(fd));
    ::close(fd);
  }
  return std::nullopt;
}

void removeUnpublished(const Comm& comm, const std::string& temporary) {
  if (comm.isRoot()) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
  }
  comm.barrier();
}

std::vector<std::byte> encodeDomainState(const DomainState& s) {
  ByteWriter w;
  w.put<std::int32_t>(s.rank_count);
  w.put(s.sample_draws);
  w.put(s.decomposition_count);
  w.put(s.grid);
  w.put<std::uint8_t>(s.grid_from_user);
  w.putVector(std::span<const CutNode>(s.cuts.nodes));
  w.putVector(std::span<const double>(s.cuts.cuts));
  w.putVector(std::span<const WeightedSample>(s.samples));
  return std::move(w.bytes());
}

DomainState decodeDomainState(std::span<const std::byte> bytes) {
  ByteReader r(bytes, "the domain state");
  DomainState s;
  s.rank_count = r.get<std::int32_t>();
  s.sample_draws = r.get<std::uint64_t>();
  s.decomposition_count = r.get<std::int64_t>();
  s.grid = r.get<std::array<int, 3>>();
  s.grid_from_user = r.get<std::uint8_t>() != 0;
  s.cuts.nodes = r.getVector<CutNode>();
  s.cuts.cuts = r.getVector<double>();
  s.samples = r.getVector<WeightedSample>();
  require(r.atEnd(), "Checkpoint", "the domain state has bytes after its samples");
  return s;
}

}  // namespace detail

Checkpoint::Checkpoint(std::string prefix, Comm comm, int keep)
    : prefix_(std::move(prefix)), comm_(std::move(comm)), keep_(keep) {
  require(!prefix_.empty(), "Checkpoint", "the file prefix is empty");
  require(keep_ >= 1, "Checkpoint", "keep must be at least 1, got {}", keep_);
}

Checkpoint& Checkpoint::add(Entry entry) {
  require(!entry.name.empty(), "Checkpoint", "a record needs a name");
  for (const Entry& e : entries_)
    require(e.name != entry.name, "Checkpoint", "two records are named '{}'", entry.name);
  entries_.push_back(std::move(entry));
  return *this;
}

Checkpoint& Checkpoint::domain(std::string name, DomainInfo& dinfo) {
  Entry e{std::move(name), Kind::kPerRank, "grove::DomainState", 1, {}, {}};
  e.save = [&dinfo](std::vector<std::byte>& scratch) {
    scratch = detail::encodeDomainState(dinfo.state());
    return Block{scratch, scratch.size()};
  };
  e.prepare = [&dinfo](std::vector<std::byte> bytes, std::uint64_t) -> std::function<void()> {
    return [&dinfo, state = detail::decodeDomainState(bytes)] { dinfo.restoreState(state); };
  };
  return add(std::move(e));
}

std::string Checkpoint::pathFor(std::int64_t step) const {
  require(step >= 0, "Checkpoint", "step {} is negative", step);
  return fmt::format("{}_{:09d}{}", prefix_, step, kSuffix);
}

std::vector<std::string> Checkpoint::list() const {
  std::string joined;  // rank 0's listing, one path per line
  std::string problem;
  if (comm_.isRoot()) {
    try {
      const std::filesystem::path prefix(prefix_);
      const std::filesystem::path dir = prefix.has_parent_path() ? prefix.parent_path() : ".";
      const std::string stem = prefix.filename().string() + "_";
      std::map<std::int64_t, std::string> found;
      if (std::filesystem::is_directory(dir)) {
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
          const std::string name = entry.path().filename().string();
          if (!name.starts_with(stem) || !name.ends_with(kSuffix)) continue;
          const std::string_view digits(name.data() + stem.size(), name.size() - stem.size() - std::strlen(kSuffix));
          std::int64_t step = -1;
          const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
          if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) continue;
          found[step] = (prefix.has_parent_path() ? dir / name : std::filesystem::path(name)).string();
        }
      }
      for (const auto& [step, path] : found) joined += path + "\n";
    } catch (const std::exception& e) {
      problem = fmt::format("listing the checkpoints {}_*{}: {}", prefix_, kSuffix, e.what());
    }
  }
  agreeOnRootFailure(comm_, problem, "Checkpoint::list");
  std::vector<char> text(joined.begin(), joined.end());
  comm_.broadcast(text, 0);
  std::vector<std::string> paths;
  std::string line;
  for (char c : text) {
    if (c != '\n') line += c;
    else paths.push_back(std::exchange(line, {}));
  }
  return paths;
}

std::string Checkpoint::write(std::int64_t step) {
  const std::string path = pathFor(step);
  require(comm_.allreduceMin(step) == comm_.allreduceMax(step), "Checkpoint::write",
          "the ranks disagree on the step (this rank: {})", step);
  const int ranks = comm_.size(), me = comm_.rank();
  const std::size_t n = entries_.size();

  // Every record's bytes on this rank, agreed on before the file is touched.
  std::vector<std::vector<std::byte>> scratch(n);
  std::vector<Block> blocks(n);
  std::vector<BlockInfo> mine(n);
  std::optional<std::string> problem;
  try {
    for (std::size_t i = 0; i < n; ++i) {
      blocks[i] = entries_[i].save(scratch[i]);
      mine[i] = {0, blocks[i].bytes.size(), blocks[i].elements, detail::checksum64(blocks[i].bytes)};
    }
  } catch (const std::exception& e) {
    problem = fmt::format("{}: preparing this rank's state failed: {}", path, e.what());
  }
  agreeOnFailure(comm_, problem, "Checkpoint::write");
  for (std::size_t i = 0; i < n; ++i) {
    if (entries_[i].kind != Kind::kSame) continue;
    const bool alike = comm_.allreduceMin(mine[i].checksum) == comm_.allreduceMax(mine[i].checksum) &&
                       comm_.allreduceMin(mine[i].bytes) == comm_.allreduceMax(mine[i].bytes);
    require(alike, "Checkpoint::write", "{}: value '{}' differs between ranks (save a rank's own value with "
            "perRankValue)", path, entries_[i].name);
  }

  // Where each block goes: rank by rank, records in order, after the preamble.
  const std::vector<BlockInfo> all = comm_.allgatherv(std::span<const BlockInfo>(mine));
  Directory directory;
  directory.rank_count = ranks;
  for (std::size_t i = 0; i < n; ++i)
    directory.records.push_back({entries_[i].name, static_cast<std::uint8_t>(entries_[i].kind), entries_[i].type,
                                 entries_[i].element_bytes, std::vector<BlockInfo>(static_cast<std::size_t>(ranks))});
  std::uint64_t offset = sizeof(Preamble);
  for (int r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < n; ++i) {
      BlockInfo b = all[static_cast<std::size_t>(r) * n + i];
      b.offset = offset;
      offset += b.bytes;
      directory.records[i].blocks[static_cast<std::size_t>(r)] = b;
    }
  const std::vector<std::byte> directory_bytes = encodeDirectory(directory);
  Preamble preamble{};
  std::memcpy(preamble.magic, kMagic, sizeof kMagic);
  preamble.version = kFormatVersion;
  preamble.byte_order = kByteOrderMark;
  preamble.directory_offset = offset;
  preamble.directory_bytes = directory_bytes.size();
  preamble.directory_checksum = detail::checksum64(directory_bytes);
  preamble.file_bytes = offset + directory_bytes.size() + sizeof kEndMark;
  preamble.step = step;

  // Written under a temporary name, synced, read back, and renamed only then: a failure anywhere
  // (a full disk on one rank) leaves the checkpoints on disk as they were.
  const std::string temporary = path + ".tmp";
  std::string root_problem;
  if (comm_.isRoot()) {
    try {
      const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      if (!parent.empty()) std::filesystem::create_directories(parent);
    } catch (const std::exception& e) {
      root_problem = fmt::format("{}: cannot create its directory: {}", path, e.what());
    }
  }
  agreeOnRootFailure(comm_, root_problem, "Checkpoint::write");
  try {
    {
      SharedFile file(comm_, temporary, SharedFile::Mode::kCreate);
      // Every rank writes alone and stops at its first failure; the ranks agree before closing.
      std::optional<std::string> problem;
      for (std::size_t i = 0; i < n && !problem; ++i)
        problem = file.writeAt(directory.records[i].blocks[static_cast<std::size_t>(me)].offset, blocks[i].bytes);
      if (comm_.isRoot() && !problem) {
        problem = file.writeAt(0, bytesOf(preamble));
        if (!problem) problem = file.writeAt(preamble.directory_offset, directory_bytes);
        if (!problem) problem = file.writeAt(preamble.file_bytes - sizeof kEndMark, std::as_bytes(std::span(kEndMark)));
      }
      agreeOnFailure(comm_, problem, "Checkpoint::write");
      file.close();
    }
    // Read back: the frame by rank 0 (the size the preamble says, the directory as written), every
    // block by its writer (its checksum), before anything is renamed or removed.
    SharedFile file(comm_, temporary, SharedFile::Mode::kRead);
    std::optional<std::string> problem;
    try {
      if (comm_.isRoot()) {
        Preamble back{};
        std::vector<std::byte> directory_back;
        problem = readFrame(file, temporary, back, directory_back);
        if (!problem && (std::memcmp(&back, &preamble, sizeof back) != 0 || directory_back != directory_bytes))
          problem = fmt::format("{} reads back another preamble or directory than was written", temporary);
      }
      std::vector<std::byte> piece;
      for (std::size_t i = 0; i < n && !problem; ++i) {
        const BlockInfo& b = directory.records[i].blocks[static_cast<std::size_t>(me)];
        if (auto p = checkBlock(file, b, piece))
          problem = *p == "checksum" ? fmt::format("{}: record '{}' reads back with another checksum than was "
                                                   "written", temporary, entries_[i].name)
                                     : *p;
      }
    } catch (const std::exception& e) {
      problem = fmt::format("{}: reading it back failed: {}", temporary, e.what());
    }
    agreeOnFailure(comm_, problem, "Checkpoint::write");
    file.close();
  } catch (const Error& e) {
    detail::removeUnpublished(comm_, temporary);  // every failure above was agreed: every rank is here
    throw Error("Checkpoint::write", fmt::format("checkpoint {} not written (the checkpoints before it are kept): {}",
                                                 path, e.message()));
  }

  // Rank 0 publishes it, then removes what is beyond `keep` (never the one just written).
  if (comm_.isRoot()) {
    if (auto p = detail::renameDurably(temporary, path)) root_problem = *p;
  }
  agreeOnRootFailure(comm_, root_problem, "Checkpoint::write");
  std::vector<std::string> existing = list();
  std::erase(existing, path);
  if (comm_.isRoot()) {
    const std::size_t keep_others = static_cast<std::size_t>(keep_ - 1);
    for (std::size_t i = 0; i + keep_others < existing.size(); ++i) {
      std::error_code ec;
      std::filesystem::remove(existing[i], ec);
      if (ec) grove::log("warning: Checkpoint: could not remove the old checkpoint {}: {}", existing[i], ec.message());
    }
  }
  return path;
}

RestartInfo Checkpoint::restore(const std::string& path) {
  const int ranks = comm_.size(), me = comm_.rank();
  SharedFile file(comm_, path, SharedFile::Mode::kRead);

  // Rank 0 checks the frame and reads the directory; every rank gets its verdict.
  Preamble preamble{};
  std::vector<std::byte> directory_bytes;
  std::string root_problem;
  if (comm_.isRoot()) try {
    if (auto p = readFrame(file, path, preamble, directory_bytes)) root_problem = *p;
  } catch (const std::exception& e) {
    root_problem = e.what();
  }
  agreeOnRootFailure(comm_, root_problem, "Checkpoint::restore");
  comm_.broadcast(preamble, 0);
  comm_.broadcast(directory_bytes, 0);
  const Directory directory = decodeDirectory(directory_bytes, path);
  const bool same_ranks = directory.rank_count == ranks;

  // Each named record, its kind, type and element size as the program names it (every rank holds
  // the same directory, so every rank throws alike).
  std::vector<const Record*> records;
  for (const Entry& e : entries_) {
    auto it = std::find_if(directory.records.begin(), directory.records.end(),
                           [&](const Record& r) { return r.name == e.name; });
    require(it != directory.records.end(), "Checkpoint::restore", "{} has no record '{}' (it holds: {})", path, e.name,
            [&] {
              std::string names;
              for (const Record& r : directory.records) names += (names.empty() ? "'" : ", '") + r.name + "'";
              return names;
            }());
    require(it->kind == static_cast<std::uint8_t>(e.kind) && it->type == e.type &&
                it->element_bytes == e.element_bytes,
            "Checkpoint::restore", "{}: record '{}' holds type {} ({} bytes, kind {}); this program names type {} "
            "({} bytes, kind {})", path, e.name, it->type, it->element_bytes, static_cast<int>(it->kind), e.type, e.element_bytes,
            static_cast<int>(e.kind));
    records.push_back(&*it);
  }
  auto damaged = [&](const std::string& name, int writer) {
    return fmt::format("{}: record '{}' of rank {} is damaged (its checksum does not match)", path, name, writer);
  };

  // At another rank count the shares cut across the writers' blocks, so every block of every named
  // record is first checked whole, in pieces, each by one rank (block k by rank k mod ranks).
  std::optional<std::string> problem;
  if (!same_ranks) {
    try {
      std::vector<std::byte> piece;
      std::size_t k = 0;
      for (std::size_t i = 0; i < entries_.size() && !problem; ++i)
        for (int writer = 0; writer < directory.rank_count && !problem; ++writer, ++k) {
          if (static_cast<int>(k % static_cast<std::size_t>(ranks)) != me) continue;
          if (auto p = checkBlock(file, records[i]->blocks[static_cast<std::size_t>(writer)], piece))
            problem = *p == "checksum" ? damaged(entries_[i].name, writer) : fmt::format("{}: {}", path, *p);
        }
    } catch (const std::exception& e) {
      problem = fmt::format("{}: {}", path, e.what());
    }
    agreeOnFailure(comm_, problem, "Checkpoint::restore");
  }

  // This rank's bytes of each record, checked, and decoded; nothing changes until every rank has
  // all of its own.
  std::vector<std::function<void()>> commits;
  try {
    for (std::size_t i = 0; i < entries_.size() && !problem; ++i) {
      const Entry& e = entries_[i];
      const Record& rec = *records[i];
      auto read_block = [&](const BlockInfo& b, int writer) -> std::optional<std::vector<std::byte>> {
        std::vector<std::byte> bytes(b.bytes);
        problem = file.readAt(b.offset, bytes);
        if (!problem && detail::checksum64(bytes) != b.checksum) problem = damaged(e.name, writer);
        if (problem) return std::nullopt;
        return bytes;
      };
      if (e.kind == Kind::kSame || same_ranks) {
        const int writer = e.kind == Kind::kSame ? 0 : me;
        const BlockInfo& b = rec.blocks[static_cast<std::size_t>(writer)];
        if (auto bytes = read_block(b, writer)) commits.push_back(e.prepare(std::move(*bytes), b.elements));
      } else if (e.kind == Kind::kParticles) {
        // A contiguous share of all particles, in the writers' rank order (their blocks checked above).
        std::uint64_t total = 0;
        for (const BlockInfo& b : rec.blocks) total += b.elements;
        const std::uint64_t first = total * static_cast<std::uint64_t>(me) / static_cast<std::uint64_t>(ranks);
        const std::uint64_t last = total * static_cast<std::uint64_t>(me + 1) / static_cast<std::uint64_t>(ranks);
        std::vector<std::byte> bytes((last - first) * rec.element_bytes);
        std::uint64_t start = 0;
        for (const BlockInfo& b : rec.blocks) {
          const std::uint64_t lo = std::max(start, first), hi = std::min(start + b.elements, last);
          if (lo < hi && !problem)
            problem = file.readAt(b.offset + (lo - start) * rec.element_bytes,
                                  std::span(bytes).subspan((lo - first) * rec.element_bytes, (hi - lo) * rec.element_bytes));
          start += b.elements;
        }
        if (!problem) commits.push_back(e.prepare(std::move(bytes), last - first));
      }
      // A per-rank record at another rank count stays as it is.
    }
  } catch (const std::exception& e) {
    problem = fmt::format("{}: {}", path, e.what());
  }
  agreeOnFailure(comm_, problem, "Checkpoint::restore");
  for (auto& commit : commits) commit();
  return {path, preamble.step, directory.rank_count, same_ranks};
}

std::optional<RestartInfo> Checkpoint::restoreLatest() {
  const std::vector<std::string> paths = list();
  std::string refused;
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
    try {
      return restore(*it);
    } catch (const Error& e) {  // restore throws on every rank together, so the ranks stay in step
      grove::log("warning: checkpoint {} refused ({}); trying the one before it", *it, e.what());
      refused += fmt::format("\n  {}: {}", *it, e.what());
    }
  }
  require(paths.empty(), "Checkpoint::restoreLatest", "every checkpoint of {} was refused:{}", prefix_, refused);
  return std::nullopt;
}

}  // namespace grove::io
