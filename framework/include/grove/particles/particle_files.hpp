#pragma once
/// @file
/// Particle files, as FDPS 7.1 reads and writes them (ParticleSystem::readParticleAscii,
/// writeParticleAscii, readParticleBinary, writeParticleBinary).
///
/// The user's particle type formats one record: `void writeAscii(FILE*) const` and
/// `void readAscii(FILE*)` (Binary likewise). An optional header type formats the file's head:
/// `writeAscii(FILE*) const` and `readAscii(FILE*)`, which returns the number of particle records
/// that follow, or a negative number when it does not know them. Then the records are counted:
/// one per non-blank line (ascii), or the bytes after the header divided by the size of one
/// record (binary, measured by reading the first record).
///
/// Two layouts, as in FDPS:
/// @verbatim
///   one file   (no format)  write: the particles of all ranks are gathered to rank 0 in rank
///                           order, and rank 0 writes the header (its own copy) and every record.
///                           read: every rank opens the file and reads the header into its own
///                           copy; rank 0 reads the records and hands them out in file order, the
///                           first n/p + n%p to rank 0 and n/p to each later rank. (Rank 0
///                           holds all records at once, as it does when writing.)
///   one file per rank (format, e.g. "%s_%03d_%03d.dat", filled with (filename, number of ranks,
///                           rank))   each rank writes or reads its own file, header included.
/// @endverbatim
///
/// Beyond FDPS: every failure (a file that cannot be opened, a read or write error, a file that
/// ends before its last record, a binary file with a partial record at its end, a bad format)
/// throws the same grove::Error on every rank (grove/comm/agree.hpp), naming the file and the
/// system's reason, so ranks leave the call together, and a failed read leaves the particles as
/// they were. Files are written in place, as FDPS writes them (a failed write leaves a partial
/// file; checkpoints and snapshots are the formats that never do). Each file written counts as one
/// write for GROVE_FAULT_INJECT (grove/core/fault_injection.hpp). A damaged file never crashes or hangs a read:
/// a record that the user's reader cannot consume is an error, so a read takes at most one step
/// per byte whatever count a header announces (tests/fdps/particle_file_fuzz_test.cpp). Reading
/// keeps what the header announces; a file holding more records than announced is read up to the
/// announced count, as in FDPS.
#include <cctype>
#include <cerrno>
#include <climits>
#include <concepts>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "grove/comm/agree.hpp"
#include "grove/comm/comm.hpp"
#include "grove/core/error.hpp"
#include "grove/core/fault_injection.hpp"

namespace grove {

// ---- contracts ------------------------------------------------------------------------------------
/// Particle types that read one ascii record: `p.readAscii(FILE*)`.
template <class P>
concept HasReadAscii = requires(P& p, std::FILE* fp) { p.readAscii(fp); };
/// Particle types that write one ascii record: `p.writeAscii(FILE*)` on a const particle.
template <class P>
concept HasWriteAscii = requires(const P& p, std::FILE* fp) { p.writeAscii(fp); };
/// Particle types that read one binary record: `p.readBinary(FILE*)`.
template <class P>
concept HasReadBinary = requires(P& p, std::FILE* fp) { p.readBinary(fp); };
/// Particle types that write one binary record: `p.writeBinary(FILE*)` on a const particle.
template <class P>
concept HasWriteBinary = requires(const P& p, std::FILE* fp) { p.writeBinary(fp); };

/// Header types whose `readAscii(FILE*)` returns the record count (negative: unknown), as
/// something convertible to long long.
template <class H>
concept HeaderReadsAscii = requires(H& h, std::FILE* fp) { { h.readAscii(fp) } -> std::convertible_to<long long>; };
/// Header types whose `readBinary(FILE*)` returns the record count (negative: unknown), as
/// something convertible to long long.
template <class H>
concept HeaderReadsBinary = requires(H& h, std::FILE* fp) { { h.readBinary(fp) } -> std::convertible_to<long long>; };
/// Header types with `writeAscii(FILE*)`. H may be const-qualified, so that const and non-const
/// headers both work.
template <class H>
concept HeaderWritesAscii = requires(H& h, std::FILE* fp) { h.writeAscii(fp); };
/// Header types with `writeBinary(FILE*)`. H may be const-qualified, so that const and non-const
/// headers both work.
template <class H>
concept HeaderWritesBinary = requires(H& h, std::FILE* fp) { h.writeBinary(fp); };

/// The header of a file without one (FDPS's DummyHeader): nothing written, count unknown.
struct NoFileHeader {
  int readAscii(std::FILE*) { return -1; }  ///< reads nothing; -1: the records are counted
  void writeAscii(std::FILE*) const {}  ///< writes nothing
  int readBinary(std::FILE*) { return -1; }  ///< reads nothing; -1: the records are counted
  void writeBinary(std::FILE*) const {}  ///< writes nothing
};

/// How a particle file's records are written: the ascii or the binary members of the particle
/// and header types, files opened in text or binary mode.
enum class FileEncoding {
  Ascii,  ///< readAscii/writeAscii; one record per non-blank line when counted
  Binary  ///< readBinary/writeBinary; records of one size when counted
};

namespace io {

namespace detail {

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// ": <the system's reason>", or nothing when the system gave none.
inline std::string systemReason() { return errno == 0 ? std::string() : fmt::format(": {}", std::strerror(errno)); }

inline bool isOneOf(char c, const char* set) { return c != '\0' && std::strchr(set, c) != nullptr; }

// Checks that format takes exactly (const char* filename, int rank count, int rank), as FDPS
// fills it, and returns the name; a format that could not tell the ranks' files apart would
// make ranks overwrite each other's particles.
inline std::optional<std::string> rankFileName(const std::string& format, const std::string& filename, int rank_count,
                                               int rank, std::string& problem) {
  std::string kinds;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') continue;
    if (i + 1 < format.size() && format[i + 1] == '%') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < format.size() && isOneOf(format[j], "-+ #0")) ++j;
    while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) ++j;
    if (j < format.size() && format[j] == '.') {
      ++j;
      while (j < format.size() && std::isdigit(static_cast<unsigned char>(format[j]))) ++j;
    }
    if (j >= format.size()) {
      kinds += '?';
      break;
    }
    const char c = format[j];
    kinds += c == 's' ? 's' : (isOneOf(c, "diouxX") ? 'i' : '?');
    i = j;
  }
  if (kinds != "sii") {
    problem = fmt::format(
        "file-name format '{}' must take the file name, the number of ranks and the rank, in that order "
        "(e.g. \"%s_%03d_%03d.dat\")",
        format);
    return std::nullopt;
  }
  const int length = std::snprintf(nullptr, 0, format.c_str(), filename.c_str(), rank_count, rank);
  if (length < 0) {
    problem = fmt::format("file-name format '{}' could not be applied", format);
    return std::nullopt;
  }
  std::string name(static_cast<std::size_t>(length) + 1, '\0');
  std::snprintf(name.data(), name.size(), format.c_str(), filename.c_str(), rank_count, rank);
  name.resize(static_cast<std::size_t>(length));
  return name;
}

inline FilePtr openFile(const std::string& name, const char* mode, std::optional<std::string>& problem) {
  errno = 0;
  FilePtr f(std::fopen(name.c_str(), mode));
  if (!f) {
    const bool for_reading = mode[0] == 'r';
    problem = fmt::format("cannot open '{}' for {}{}", name, for_reading ? "reading" : "writing", systemReason());
  }
  return f;
}

// Records left in an ascii file: its non-blank lines from here to the end.
inline long long countAsciiRecords(std::FILE* fp) {
  const long start = std::ftell(fp);
  long long lines = 0;
  bool line_has_text = false;
  for (int c; (c = std::getc(fp)) != EOF;) {
    if (c == '\n') {
      lines += line_has_text ? 1 : 0;
      line_has_text = false;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      line_has_text = true;
    }
  }
  lines += line_has_text ? 1 : 0;
  std::clearerr(fp);
  std::fseek(fp, start, SEEK_SET);
  return lines;
}

// Records left in a binary file: the remaining bytes over the size of one record (measured by
// reading the first). A remainder that is not a whole record is reported, not dropped.
template <class FP, class ReadRecord>
std::optional<long long> countBinaryRecords(std::FILE* fp, ReadRecord& read_record, const std::string& name,
                                            std::optional<std::string>& problem) {
  const long start = std::ftell(fp);
  std::fseek(fp, 0, SEEK_END);
  const long end = std::ftell(fp);
  if (start < 0 || end < 0) {
    problem = fmt::format("cannot measure '{}'{}", name, systemReason());
    return std::nullopt;
  }
  std::fseek(fp, start, SEEK_SET);
  const long remaining = end - start;
  if (remaining == 0) return 0;
  FP probe{};
  read_record(probe, fp);
  const long record_bytes = std::ftell(fp) - start;
  std::clearerr(fp);
  std::fseek(fp, start, SEEK_SET);
  if (record_bytes <= 0) {
    problem = fmt::format(
        "'{}': reading one particle record consumed no bytes, so the records cannot be counted "
        "(have the header's readBinary return the count)",
        name);
    return std::nullopt;
  }
  if (remaining % record_bytes != 0) {
    problem = fmt::format(
        "'{}' holds {} bytes after its header, which is not a whole number of {}-byte particle "
        "records",
        name, remaining, record_bytes);
    return std::nullopt;
  }
  return remaining / record_bytes;
}

// Reads the records of an open file (positioned after its header). announced < 0: count them.
template <FileEncoding E, class FP, class ReadRecord>
std::vector<FP> readRecords(std::FILE* fp, long long announced, ReadRecord& read_record, const std::string& name,
                            std::optional<std::string>& problem) {
  std::vector<FP> out;
  long long n = announced;
  if (n < 0) {
    if constexpr (E == FileEncoding::Ascii) {
      n = countAsciiRecords(fp);
    } else {
      const auto counted = countBinaryRecords<FP>(fp, read_record, name, problem);
      if (!counted) return out;
      n = *counted;
    }
  }
  if (n > INT_MAX) {
    problem = fmt::format("'{}' announces {} particles; one file holds at most {}", name, n, INT_MAX);
    return out;
  }
  for (long long i = 0; i < n; ++i) {
    // A record must start before the end of the file: skip the blank space between ascii
    // records, look one byte ahead in binary ones.
    int c;
    if constexpr (E == FileEncoding::Ascii) {
      do c = std::getc(fp);
      while (c != EOF && std::isspace(static_cast<unsigned char>(c)));
    } else {
      c = std::getc(fp);
    }
    if (c == EOF) {
      problem = fmt::format("'{}' ends after {} of the {} particle records it should hold", name, i, n);
      return out;
    }
    std::ungetc(c, fp);
    const long record_start = std::ftell(fp);
    FP p{};
    read_record(p, fp);
    // A record that reads nothing would be read again and again, up to the announced count (a
    // damaged header may announce two billion): stop at the first one.
    if (record_start >= 0 && std::ftell(fp) == record_start) {
      problem = fmt::format("'{}': particle record {} of {} at byte {} could not be read (nothing was consumed)", name,
                            i, n, record_start);
      return out;
    }
    if (std::ferror(fp)) {
      problem = fmt::format("read error in '{}' at particle record {}{}", name, i, systemReason());
      return out;
    }
    if constexpr (E == FileEncoding::Binary) {
      if (std::feof(fp)) {
        problem = fmt::format("'{}' ends inside particle record {} of {}", name, i, n);
        return out;
      }
    }
    out.push_back(p);
  }
  return out;
}

template <class FP, class WriteRecord, class WriteHeader>
void writeFile(const std::string& name, const char* mode, std::span<const FP> particles, WriteHeader& write_header,
               WriteRecord& write_record, std::optional<std::string>& problem) {
  FilePtr f = openFile(name, mode, problem);
  if (!f) return;
  if (std::string fault = grove::detail::injectedWriteFault(grove::detail::worldRankForMessages()); !fault.empty()) {
    problem = fmt::format("could not write all of '{}' ({} particles): {}", name, particles.size(), fault);
    return;
  }
  errno = 0;  // so that the reason below is this file's
  write_header(f.get());
  for (const FP& p : particles) write_record(p, f.get());
  const bool write_failed = std::ferror(f.get()) != 0;
  const bool close_failed = std::fclose(f.release()) != 0;
  if (write_failed || close_failed)
    problem = fmt::format("could not write all of '{}' ({} particles){}", name, particles.size(), systemReason());
}

}  // namespace detail

/// Collective over comm. Returns this rank's particles from the file(s), or throws grove::Error
/// on every rank. read_header(FILE*) returns the announced count (negative: count the records);
/// read_record(FP&, FILE*) reads one.
///
/// With a format (one file per rank, "%s_%03d_%03d.dat" taking filename, rank count and rank),
/// each rank reads its own file. Without one, every rank opens `filename` and calls read_header
/// on it; rank 0 reads the records and hands them out in file order, the first n/p + n%p to rank 0
/// and n/p to each later rank. `stage` names the call in error messages. A file announcing more
/// than INT_MAX records is an error.
template <FileEncoding E, class FP, class ReadHeader, class ReadRecord>
std::vector<FP> readParticles(const Comm& comm, const std::string& filename, const std::optional<std::string>& format,
                              ReadHeader&& read_header, ReadRecord&& read_record, std::string_view stage) {
  const char* mode = E == FileEncoding::Ascii ? "r" : "rb";
  const int rank = comm.rank(), ranks = comm.size();
  std::optional<std::string> problem;

  if (format) {
    // One file per rank.
    std::string format_problem;
    const auto name = detail::rankFileName(*format, filename, ranks, rank, format_problem);
    if (!name) problem = format_problem;
    std::vector<FP> mine;
    if (name) {
      if (auto f = detail::openFile(*name, mode, problem)) {
        const long long announced = static_cast<long long>(read_header(f.get()));
        mine = detail::readRecords<E, FP>(f.get(), announced, read_record, *name, problem);
      }
    }
    agreeOnFailure(comm, problem, fmt::format("{}('{}', format '{}')", stage, filename, *format));
    return mine;
  }

  // One file: every rank reads the header into its own copy; rank 0 reads the records.
  const std::string where = fmt::format("{}('{}')", stage, filename);
  detail::FilePtr f = detail::openFile(filename, mode, problem);
  long long announced = -1;
  if (f) announced = static_cast<long long>(read_header(f.get()));
  if (rank != 0) f.reset();
  agreeOnFailure(comm, problem, where);

  std::vector<FP> all;
  std::vector<int> send_counts(static_cast<std::size_t>(ranks), 0);
  if (rank == 0) {
    all = detail::readRecords<E, FP>(f.get(), announced, read_record, filename, problem);
    const auto n = static_cast<long long>(all.size());
    for (int r = 0; r < ranks; ++r) send_counts[static_cast<std::size_t>(r)] = static_cast<int>(n / ranks);
    send_counts[0] += static_cast<int>(n % ranks);
  }
  f.reset();
  agreeOnFailure(comm, problem, where);
  return comm.alltoallv(std::span<const FP>(all), std::span<const int>(send_counts));
}

/// Collective over comm. Writes the particles of all ranks to the file(s), or throws grove::Error
/// on every rank. write_header(FILE*) writes the head; write_record(const FP&, FILE*) one record.
///
/// With a format (as for readParticles), each rank writes its own file, header included. Without
/// one, the particles are gathered to rank 0 in rank order and rank 0 writes the header and every
/// record. Files are written in place: a failed write may leave a partial file. `stage` names the
/// call in error messages.
template <FileEncoding E, class FP, class WriteHeader, class WriteRecord>
void writeParticles(const Comm& comm, std::span<const FP> particles, const std::string& filename,
                    const std::optional<std::string>& format, WriteHeader&& write_header, WriteRecord&& write_record,
                    std::string_view stage) {
  const char* mode = E == FileEncoding::Ascii ? "w" : "wb";
  std::optional<std::string> problem;
  if (format) {
    std::string format_problem;
    const auto name = detail::rankFileName(*format, filename, comm.size(), comm.rank(), format_problem);
    if (!name)
      problem = format_problem;
    else
      detail::writeFile<FP>(*name, mode, particles, write_header, write_record, problem);
    agreeOnFailure(comm, problem, fmt::format("{}('{}', format '{}')", stage, filename, *format));
    return;
  }
  const std::vector<FP> all = comm.gatherv(particles, 0);
  if (comm.rank() == 0)
    detail::writeFile<FP>(filename, mode, std::span<const FP>(all), write_header, write_record, problem);
  agreeOnFailure(comm, problem, fmt::format("{}('{}')", stage, filename));
}

// ---- FDPS argument lists ----------------------------------------------------------------------------
// After the file name FDPS takes, each optional and in this order: a file-name format (one file
// per rank), a header object, and a member function of FP to use instead of readAscii/... .
namespace detail {

enum ArgKind { kBadArg = 0, kFormatArg = 1, kHeaderArg = 2, kMemberArg = 3 };

template <class A>
consteval int argKind() {
  using T = std::decay_t<A>;
  if constexpr (std::is_convertible_v<T, const char*> || std::is_same_v<T, std::string> ||
                std::is_same_v<T, std::string_view>)
    return kFormatArg;
  else if constexpr (std::is_member_function_pointer_v<T>)
    return kMemberArg;
  else if constexpr (std::is_class_v<T>)
    return kHeaderArg;
  else
    return kBadArg;
}

template <class... Args>
consteval bool validArgList() {
  constexpr int kinds[] = {argKind<Args>()..., 4};
  for (std::size_t i = 0; i < sizeof...(Args); ++i) {
    if (kinds[i] == kBadArg) return false;
    if (i > 0 && kinds[i] <= kinds[i - 1]) return false;
  }
  return true;
}

template <int Kind, class... Args>
constexpr bool hasArg = ((argKind<Args>() == Kind) || ...);

// The argument of that kind (there is exactly one when hasArg says so), as an lvalue.
template <int Kind, class A, class... Rest>
auto& argOfKind(A& a, Rest&... rest) {
  if constexpr (argKind<A>() == Kind)
    return a;
  else
    return argOfKind<Kind>(rest...);
}

template <class... Args>
std::optional<std::string> formatOf(Args&... args) {
  if constexpr (hasArg<kFormatArg, Args...>) {
    const auto& f = argOfKind<kFormatArg>(args...);
    if constexpr (std::is_convertible_v<std::decay_t<decltype(f)>, const char*>) {
      const char* s = f;
      if (s == nullptr) return std::nullopt;  // FDPS: a null format means one file
      return std::string(s);
    } else {
      return std::string(f);
    }
  } else {
    return std::nullopt;
  }
}

template <FileEncoding E, class FP, class... Args>
auto recordReader(Args&... args) {
  if constexpr (hasArg<kMemberArg, Args...>) {
    auto member = argOfKind<kMemberArg>(args...);
    static_assert(std::is_invocable_v<decltype(member), FP&, std::FILE*>,
                  "grove::readParticle*: the member given must be a member function of FP: `void (FP::*)(FILE*)`");
    if constexpr (std::is_invocable_v<decltype(member), FP&, std::FILE*>)
      return [member](FP& p, std::FILE* fp) { std::invoke(member, p, fp); };
    else
      return [](FP&, std::FILE*) {};
  } else if constexpr (E == FileEncoding::Ascii) {
    static_assert(HasReadAscii<FP>, "grove::readParticleAscii: the particle type needs `void readAscii(FILE*)`");
    if constexpr (HasReadAscii<FP>)
      return [](FP& p, std::FILE* fp) { p.readAscii(fp); };
    else
      return [](FP&, std::FILE*) {};
  } else {
    static_assert(HasReadBinary<FP>, "grove::readParticleBinary: the particle type needs `void readBinary(FILE*)`");
    if constexpr (HasReadBinary<FP>)
      return [](FP& p, std::FILE* fp) { p.readBinary(fp); };
    else
      return [](FP&, std::FILE*) {};
  }
}

template <FileEncoding E, class FP, class... Args>
auto recordWriter(Args&... args) {
  if constexpr (hasArg<kMemberArg, Args...>) {
    auto member = argOfKind<kMemberArg>(args...);
    static_assert(std::is_invocable_v<decltype(member), const FP&, std::FILE*>,
                  "grove::writeParticle*: the member given must be a const member function of FP: "
                  "`void (FP::*)(FILE*) const`");
    if constexpr (std::is_invocable_v<decltype(member), const FP&, std::FILE*>)
      return [member](const FP& p, std::FILE* fp) { std::invoke(member, p, fp); };
    else
      return [](const FP&, std::FILE*) {};
  } else if constexpr (E == FileEncoding::Ascii) {
    static_assert(HasWriteAscii<FP>,
                  "grove::writeParticleAscii: the particle type needs `void writeAscii(FILE*) const`");
    if constexpr (HasWriteAscii<FP>)
      return [](const FP& p, std::FILE* fp) { p.writeAscii(fp); };
    else
      return [](const FP&, std::FILE*) {};
  } else {
    static_assert(HasWriteBinary<FP>,
                  "grove::writeParticleBinary: the particle type needs `void writeBinary(FILE*) const`");
    if constexpr (HasWriteBinary<FP>)
      return [](const FP& p, std::FILE* fp) { p.writeBinary(fp); };
    else
      return [](const FP&, std::FILE*) {};
  }
}

template <FileEncoding E, class H>
auto headerReader(H& header) {
  if constexpr (E == FileEncoding::Ascii) {
    static_assert(HeaderReadsAscii<H>,
                  "grove::readParticleAscii: the header type needs `readAscii(FILE*)` returning the particle count "
                  "(or -1); a const header cannot be read into");
    if constexpr (HeaderReadsAscii<H>)
      return [&header](std::FILE* fp) { return static_cast<long long>(header.readAscii(fp)); };
    else
      return [](std::FILE*) { return -1LL; };
  } else {
    static_assert(HeaderReadsBinary<H>,
                  "grove::readParticleBinary: the header type needs `readBinary(FILE*)` returning the particle count "
                  "(or -1); a const header cannot be read into");
    if constexpr (HeaderReadsBinary<H>)
      return [&header](std::FILE* fp) { return static_cast<long long>(header.readBinary(fp)); };
    else
      return [](std::FILE*) { return -1LL; };
  }
}

template <FileEncoding E, class H>
auto headerWriter(H& header) {
  if constexpr (E == FileEncoding::Ascii) {
    static_assert(HeaderWritesAscii<H>,
                  "grove::writeParticleAscii: the header type needs `void writeAscii(FILE*) const`");
    if constexpr (HeaderWritesAscii<H>)
      return [&header](std::FILE* fp) { header.writeAscii(fp); };
    else
      return [](std::FILE*) {};
  } else {
    static_assert(HeaderWritesBinary<H>,
                  "grove::writeParticleBinary: the header type needs `void writeBinary(FILE*) const`");
    if constexpr (HeaderWritesBinary<H>)
      return [&header](std::FILE* fp) { header.writeBinary(fp); };
    else
      return [](std::FILE*) {};
  }
}

}  // namespace detail

/// The FDPS entry point behind ParticleSystem::readParticleAscii and readParticleBinary; collective
/// over comm, as readParticles. args: [format] [header] [&FP::member], each optional, in this order
/// (checked at compile time): a file-name format (a null `const char*` means one file), a header
/// object read into (a NoFileHeader when absent), and a `void (FP::*)(FILE*)` reading one record
/// instead of FP::readAscii/readBinary.
template <FileEncoding E, class FP, class... Args>
std::vector<FP> readParticlesFdps(const Comm& comm, const std::string& filename, std::string_view stage,
                                  Args&... args) {
  static_assert(detail::validArgList<Args...>(),
                "grove: readParticleAscii/readParticleBinary take (filename [, format] [, header] [, &FP::member]), "
                "in that order");
  if constexpr (!detail::validArgList<Args...>())
    return std::vector<FP>{};
  else {
    const std::optional<std::string> format = detail::formatOf(args...);
    auto read_record = detail::recordReader<E, FP>(args...);
    if constexpr (detail::hasArg<detail::kHeaderArg, Args...>) {
      auto read_header = detail::headerReader<E>(detail::argOfKind<detail::kHeaderArg>(args...));
      return readParticles<E, FP>(comm, filename, format, read_header, read_record, stage);
    } else {
      NoFileHeader no_header;
      auto read_header = detail::headerReader<E>(no_header);
      return readParticles<E, FP>(comm, filename, format, read_header, read_record, stage);
    }
  }
}

/// The FDPS entry point behind ParticleSystem::writeParticleAscii and writeParticleBinary;
/// collective over comm, as writeParticles. args as for readParticlesFdps; the member, if given,
/// is a `void (FP::*)(FILE*) const` writing one record instead of FP::writeAscii/writeBinary.
template <FileEncoding E, class FP, class... Args>
void writeParticlesFdps(const Comm& comm, std::span<const FP> particles, const std::string& filename,
                        std::string_view stage, Args&... args) {
  static_assert(detail::validArgList<Args...>(),
                "grove: writeParticleAscii/writeParticleBinary take (filename [, format] [, header] [, &FP::member]), "
                "in that order");
  if constexpr (detail::validArgList<Args...>()) {
    const std::optional<std::string> format = detail::formatOf(args...);
    auto write_record = detail::recordWriter<E, FP>(args...);
    if constexpr (detail::hasArg<detail::kHeaderArg, Args...>) {
      auto write_header = detail::headerWriter<E>(detail::argOfKind<detail::kHeaderArg>(args...));
      writeParticles<E, FP>(comm, particles, filename, format, write_header, write_record, stage);
    } else {
      const NoFileHeader no_header;
      auto write_header = detail::headerWriter<E>(no_header);
      writeParticles<E, FP>(comm, particles, filename, format, write_header, write_record, stage);
    }
  }
}

}  // namespace io
}  // namespace grove
