// The single-process backend used when grove is built with GROVE_MPI=OFF. There is one rank;
// collectives copy their input, and messages to oneself are matched by tag in posting order.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "grove/comm/backend.hpp"
#include "grove/core/error.hpp"
#include "grove/core/fault_injection.hpp"

namespace grove::detail {

struct CommHandle;

struct RequestHandle {
  CommHandle* owner = nullptr;
  bool is_receive = false;
  bool complete = false;
  int tag = 0;
  void* receive_buffer = nullptr;
  std::size_t capacity_bytes = 0;
};

struct CommHandle {
  struct Message {
    int tag;
    std::vector<unsigned char> bytes;
  };
  std::deque<Message> unmatched_sends;
  std::deque<RequestHandle*> unmatched_receives;

  // Hands queued messages to waiting receives, oldest first, as MPI's ordering rule requires.
  void match() {
    for (auto r = unmatched_receives.begin(); r != unmatched_receives.end();) {
      auto m = unmatched_sends.begin();
      while (m != unmatched_sends.end() && m->tag != (*r)->tag) ++m;
      if (m == unmatched_sends.end()) {
        ++r;
        continue;
      }
      if (m->bytes.size() > (*r)->capacity_bytes)
        throw Error("Comm", fmt::format("message of {} bytes with tag {} is larger than its receive buffer ({} bytes)",
                                        m->bytes.size(), m->tag, (*r)->capacity_bytes));
      if (!m->bytes.empty()) std::memcpy((*r)->receive_buffer, m->bytes.data(), m->bytes.size());
      (*r)->complete = true;
      unmatched_sends.erase(m);
      r = unmatched_receives.erase(r);
    }
  }
};

namespace {
bool g_initialized = false;

void requireRankZero(int rank, const char* what) {
  if (rank != 0)
    throw Error("Comm", fmt::format("{} names rank {}, but this build (GROVE_MPI=OFF) has only rank 0", what, rank));
}
}  // namespace

bool backendHasMpi() noexcept { return false; }

void backendInitialize(int*, char***, int* provided_thread_level, bool* we_initialized) {
  *we_initialized = !g_initialized;
  g_initialized = true;
  *provided_thread_level = 3;  // a single process has no thread restriction
}

void backendFinalize() { g_initialized = false; }

void backendAbortAll(int exit_code) noexcept { std::_Exit(exit_code); }

bool backendIsInitialized() noexcept { return g_initialized; }

int worldRankForMessages() noexcept { return 0; }

CommPtr worldComm() {
  static const CommPtr world = std::make_shared<CommHandle>();
  return world;
}

CommPtr splitComm(const CommHandle&, int, int) { return std::make_shared<CommHandle>(); }

int commRank(const CommHandle&) { return 0; }
int commSize(const CommHandle&) { return 1; }
const void* nativeComm(const CommHandle&) noexcept { return nullptr; }
CommPtr adoptNativeComm(const void*) { return std::make_shared<CommHandle>(); }
CommPtr subsetComm(const CommHandle&, const int* ranks, int n) {
  for (int i = 0; i < n; ++i)
    if (ranks[i] == 0) return std::make_shared<CommHandle>();
  return nullptr;
}
void barrier(const CommHandle&) {}

void allreduce(const CommHandle&, const void* in, void* out, std::size_t count, ScalarKind kind, ReduceOp) {
  std::size_t scalar_bytes = 0;
  switch (kind) {
    case ScalarKind::Int8: case ScalarKind::UInt8: scalar_bytes = 1; break;
    case ScalarKind::Int16: case ScalarKind::UInt16: scalar_bytes = 2; break;
    case ScalarKind::Int32: case ScalarKind::UInt32: case ScalarKind::Float: scalar_bytes = 4; break;
    case ScalarKind::Int64: case ScalarKind::UInt64: case ScalarKind::Double: scalar_bytes = 8; break;
    case ScalarKind::LongDouble: scalar_bytes = sizeof(long double); break;
  }
  if (count) std::memmove(out, in, count * scalar_bytes);
}

void broadcast(const CommHandle&, void*, int, std::size_t, int root) { requireRankZero(root, "broadcast root"); }

void allgather(const CommHandle&, const void* in, void* out, std::size_t elem_bytes) {
  std::memmove(out, in, elem_bytes);
}

void allgatherv(const CommHandle&, const void* in, int count, void* out, const int*, const int*,
                std::size_t elem_bytes) {
  if (count) std::memmove(out, in, static_cast<std::size_t>(count) * elem_bytes);
}

void gatherv(const CommHandle& comm, const void* in, int count, void* out, const int* counts,
             const int* displacements, std::size_t elem_bytes, int root) {
  requireRankZero(root, "gatherv root");
  allgatherv(comm, in, count, out, counts, displacements, elem_bytes);
}

void alltoall(const CommHandle&, const void* in, void* out, std::size_t elem_bytes) {
  std::memmove(out, in, elem_bytes);
}

void alltoallv(const CommHandle&, const void* in, const int* send_counts, const int* send_displacements, void* out,
               const int*, const int* recv_displacements, std::size_t elem_bytes) {
  if (send_counts[0])
    std::memmove(static_cast<char*>(out) + static_cast<std::size_t>(recv_displacements[0]) * elem_bytes,
                 static_cast<const char*>(in) + static_cast<std::size_t>(send_displacements[0]) * elem_bytes,
                 static_cast<std::size_t>(send_counts[0]) * elem_bytes);
}

RequestHandle* isend(const CommHandle& comm, const void* buffer, int count, std::size_t elem_bytes, int dest,
                     int tag) {
  requireRankZero(dest, "isend destination");
  auto& self = const_cast<CommHandle&>(comm);
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  self.unmatched_sends.push_back({tag, {bytes, bytes + static_cast<std::size_t>(count) * elem_bytes}});
  self.match();
  auto* request = new RequestHandle;
  request->complete = true;  // the message was copied: the send buffer is free again
  return request;
}

RequestHandle* irecv(const CommHandle& comm, void* buffer, int count, std::size_t elem_bytes, int source, int tag) {
  requireRankZero(source, "irecv source");
  auto& self = const_cast<CommHandle&>(comm);
  auto* request = new RequestHandle{&self, true, false, tag, buffer, static_cast<std::size_t>(count) * elem_bytes};
  self.unmatched_receives.push_back(request);
  self.match();
  return request;
}

void wait(RequestHandle& request) {
  if (!request.complete)
    throw Error("Comm", fmt::format("waiting for a message with tag {} that was never sent: in a serial build "
                                    "this would wait forever",
                                    request.tag));
}

void sparseExchange(const CommHandle&, const int* dests, const void* data, int n, std::size_t elem_bytes,
                    std::vector<int>* sources, std::vector<unsigned char>* received) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (int k = 0; k < n; ++k) {
    requireRankZero(dests[k], "sparse exchange destination");
    received->insert(received->end(), bytes + static_cast<std::size_t>(k) * elem_bytes,
                     bytes + static_cast<std::size_t>(k + 1) * elem_bytes);
    sources->push_back(0);
  }
}

CommPtr sharedMemoryComm(const CommHandle&) { return std::make_shared<CommHandle>(); }

bool mpiIsCudaAware() noexcept { return false; }

void cancel(RequestHandle& request) noexcept {
  if (request.owner && !request.complete) std::erase(request.owner->unmatched_receives, &request);
  request.complete = true;
}

void destroyRequest(RequestHandle* request) noexcept {
  if (request && request->owner && !request->complete) std::erase(request->owner->unmatched_receives, request);
  delete request;
}

// ---- shared files: a plain file (one rank) ----------------------------------------------------------

struct FileHandle {
  std::FILE* file = nullptr;
};

namespace {
std::string errnoProblem(const char* what) { return fmt::format("{}: {}", what, std::strerror(errno)); }
}  // namespace

FileHandle* fileOpen(const CommHandle&, const char* path, FileMode mode, std::string* problem) {
  std::FILE* f = std::fopen(path, mode == FileMode::kCreate ? "wb" : "rb");
  if (!f) {
    *problem = errnoProblem("open");
    return nullptr;
  }
  problem->clear();
  return new FileHandle{f};
}

std::string fileWriteAt(FileHandle& file, std::uint64_t offset, const void* data, std::uint64_t bytes) {
  if (std::string fault = injectedWriteFault(0); !fault.empty())
    return fmt::format("write of {} bytes at byte {}: {}", bytes, offset, fault);
  if (fseeko(file.file, static_cast<off_t>(offset), SEEK_SET) != 0) return errnoProblem("seek");
  if (bytes > 0 && std::fwrite(data, 1, bytes, file.file) != bytes) return errnoProblem("write");
  return {};
}

std::string fileReadAt(FileHandle& file, std::uint64_t offset, void* data, std::uint64_t bytes) {
  if (fseeko(file.file, static_cast<off_t>(offset), SEEK_SET) != 0) return errnoProblem("seek");
  if (bytes > 0 && std::fread(data, 1, bytes, file.file) != bytes)
    return std::ferror(file.file) ? errnoProblem("read") : fmt::format("read: the file ends before byte {}", offset + bytes);
  return {};
}

std::string fileSize(FileHandle& file, std::uint64_t* bytes) {
  if (fseeko(file.file, 0, SEEK_END) != 0) return errnoProblem("seek");
  const off_t end = ftello(file.file);
  if (end < 0) return errnoProblem("size");
  *bytes = static_cast<std::uint64_t>(end);
  return {};
}

std::string fileClose(FileHandle* file) {
  std::unique_ptr<FileHandle> owned(file);
  std::string problem;
  if (std::fflush(owned->file) != 0 || fsync(fileno(owned->file)) != 0) problem = errnoProblem("sync");
  if (std::fclose(owned->file) != 0 && problem.empty()) problem = errnoProblem("close");
  return problem;
}

void fileAbandon(FileHandle* file) noexcept {
  if (!file) return;
  if (file->file) std::fclose(file->file);
  delete file;
}

}  // namespace grove::detail
