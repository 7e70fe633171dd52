// The MPI implementation of grove's communication backend. This is the only file in grove that
// includes mpi.h.
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OpenMPI's extensions: MPIX_Query_cuda_support
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "grove/comm/backend.hpp"
#include "grove/core/error.hpp"
#include "grove/core/fault_injection.hpp"

namespace grove::detail {

struct CommHandle {
  MPI_Comm comm = MPI_COMM_NULL;
  bool owned = false;
  // Sparse exchanges alternate between two tags: a rank that has left exchange k may already
  // send for exchange k + 1 while another still probes in k, but none can send for k + 2 before
  // every rank has left k (the barrier of k + 1 needs them all).
  unsigned sparse_exchanges = 0;
  ~CommHandle() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned && !finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

struct RequestHandle {
  MPI_Request request = MPI_REQUEST_NULL;
};

namespace {

// A contiguous datatype of elem_bytes bytes, so counts are in elements (and reach 2^31 elements,
// not 2^31 bytes). Made and committed once per element size and kept until MPI_Finalize (which
// frees it): making one costs about a thousand instructions in Open MPI, and a step of a small
// run makes several collective calls (the DEM sample's steps, of a few particles, spent 8% of
// their instructions making and freeing these types). Only the thread that calls MPI
// (MPI_THREAD_FUNNELED) comes here; the lock keeps the cache sound should another one.
class ElementType {
 public:
  explicit ElementType(std::size_t elem_bytes) {
    if (elem_bytes > static_cast<std::size_t>(INT_MAX))
      throw Error("Comm", fmt::format("element of {} bytes is too large", elem_bytes));
    static std::mutex lock;
    static std::vector<std::pair<std::size_t, MPI_Datatype>> made;
    const std::lock_guard<std::mutex> hold(lock);
    for (const auto& [bytes, type] : made)
      if (bytes == elem_bytes) {
        type_ = type;
        return;
      }
    MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
    made.emplace_back(elem_bytes, type_);
  }
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

MPI_Datatype toMpi(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Int8: return MPI_INT8_T;
    case ScalarKind::UInt8: return MPI_UINT8_T;
    case ScalarKind::Int16: return MPI_INT16_T;
    case ScalarKind::UInt16: return MPI_UINT16_T;
    case ScalarKind::Int32: return MPI_INT32_T;
    case ScalarKind::UInt32: return MPI_UINT32_T;
    case ScalarKind::Int64: return MPI_INT64_T;
    case ScalarKind::UInt64: return MPI_UINT64_T;
    case ScalarKind::Float: return MPI_FLOAT;
    case ScalarKind::Double: return MPI_DOUBLE;
    case ScalarKind::LongDouble: return MPI_LONG_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op toMpi(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return MPI_SUM;
    case ReduceOp::Min: return MPI_MIN;
    case ReduceOp::Max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

int toInt(std::size_t n) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw Error("Comm", fmt::format("count {} exceeds the {} an MPI count holds", n, INT_MAX));
  return static_cast<int>(n);
}

}  // namespace

bool backendHasMpi() noexcept { return true; }

void backendInitialize(int* argc, char*** argv, int* provided_thread_level, bool* we_initialized) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  *we_initialized = !initialized;
  if (!initialized) {
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, provided_thread_level);
  } else {
    MPI_Query_thread(provided_thread_level);
  }
  if (*provided_thread_level < MPI_THREAD_FUNNELED)
    throw Error("Runtime", fmt::format("the MPI library provides thread level {}, grove needs at least "
                                       "MPI_THREAD_FUNNELED",
                                       *provided_thread_level));
}

void backendFinalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void backendAbortAll(int exit_code) noexcept {
  if (backendIsInitialized()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

bool backendIsInitialized() noexcept {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

int worldRankForMessages() noexcept {
  if (!backendIsInitialized()) return 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

CommPtr worldComm() {
  if (!backendIsInitialized())
    throw Error("Comm", "MPI is not running: construct a grove::Runtime before any grove::Comm");
  static const CommPtr world = std::make_shared<CommHandle>(CommHandle{MPI_COMM_WORLD, false});
  return world;
}

CommPtr splitComm(const CommHandle& comm, int color, int key) {
  auto out = std::make_shared<CommHandle>();
  MPI_Comm_split(comm.comm, color < 0 ? MPI_UNDEFINED : color, key, &out->comm);
  out->owned = out->comm != MPI_COMM_NULL;
  return out;
}

int commRank(const CommHandle& comm) {
  int rank = 0;
  MPI_Comm_rank(comm.comm, &rank);
  return rank;
}

int commSize(const CommHandle& comm) {
  int size = 0;
  MPI_Comm_size(comm.comm, &size);
  return size;
}

const void* nativeComm(const CommHandle& comm) noexcept { return &comm.comm; }

CommPtr adoptNativeComm(const void* native_comm) {
  const MPI_Comm comm = *static_cast<const MPI_Comm*>(native_comm);
  if (comm == MPI_COMM_NULL) throw Error("Comm", "MPI_COMM_NULL is not a communicator to run on");
  return std::make_shared<CommHandle>(CommHandle{comm, false});
}

CommPtr subsetComm(const CommHandle& comm, const int* ranks, int n) {
  MPI_Group all = MPI_GROUP_NULL, some = MPI_GROUP_NULL;
  MPI_Comm_group(comm.comm, &all);
  MPI_Group_incl(all, n, ranks, &some);
  auto out = std::make_shared<CommHandle>();
  MPI_Comm_create(comm.comm, some, &out->comm);
  MPI_Group_free(&some);
  MPI_Group_free(&all);
  if (out->comm == MPI_COMM_NULL) return nullptr;
  out->owned = true;
  return out;
}

void barrier(const CommHandle& comm) { MPI_Barrier(comm.comm); }

void allreduce(const CommHandle& comm, const void* in, void* out, std::size_t count, ScalarKind kind,
               ReduceOp op) {
  MPI_Allreduce(in, out, toInt(count), toMpi(kind), toMpi(op), comm.comm);
}

void broadcast(const CommHandle& comm, void* buffer, int count, std::size_t elem_bytes, int root) {
  ElementType type(elem_bytes);
  MPI_Bcast(buffer, count, type.get(), root, comm.comm);
}

void allgather(const CommHandle& comm, const void* in, void* out, std::size_t elem_bytes) {
  ElementType type(elem_bytes);
  MPI_Allgather(in, 1, type.get(), out, 1, type.get(), comm.comm);
}

void allgatherv(const CommHandle& comm, const void* in, int count, void* out, const int* counts,
                const int* displacements, std::size_t elem_bytes) {
  ElementType type(elem_bytes);
  MPI_Allgatherv(in, count, type.get(), out, counts, displacements, type.get(), comm.comm);
}

void gatherv(const CommHandle& comm, const void* in, int count, void* out, const int* counts,
             const int* displacements, std::size_t elem_bytes, int root) {
  ElementType type(elem_bytes);
  MPI_Gatherv(in, count, type.get(), out, counts, displacements, type.get(), root, comm.comm);
}

void alltoall(const CommHandle& comm, const void* in, void* out, std::size_t elem_bytes) {
  ElementType type(elem_bytes);
  MPI_Alltoall(in, 1, type.get(), out, 1, type.get(), comm.comm);
}

void alltoallv(const CommHandle& comm, const void* in, const int* send_counts, const int* send_displacements,
               void* out, const int* recv_counts, const int* recv_displacements, std::size_t elem_bytes) {
  ElementType type(elem_bytes);
  MPI_Alltoallv(in, send_counts, send_displacements, type.get(), out, recv_counts, recv_displacements, type.get(),
                comm.comm);
}

RequestHandle* isend(const CommHandle& comm, const void* buffer, int count, std::size_t elem_bytes, int dest,
                     int tag) {
  ElementType type(elem_bytes);
  auto* request = new RequestHandle;
  MPI_Isend(buffer, count, type.get(), dest, tag, comm.comm, &request->request);
  return request;
}

RequestHandle* irecv(const CommHandle& comm, void* buffer, int count, std::size_t elem_bytes, int source,
                     int tag) {
  ElementType type(elem_bytes);
  auto* request = new RequestHandle;
  MPI_Irecv(buffer, count, type.get(), source, tag, comm.comm, &request->request);
  return request;
}

void wait(RequestHandle& request) { MPI_Wait(&request.request, MPI_STATUS_IGNORE); }

void sparseExchange(const CommHandle& comm, const int* dests, const void* data, int n, std::size_t elem_bytes,
                    std::vector<int>* sources, std::vector<unsigned char>* received) {
  constexpr int kSparseTagBase = 0x6780;
  const int tag = kSparseTagBase + static_cast<int>(const_cast<CommHandle&>(comm).sparse_exchanges++ % 2);
  const int bytes = toInt(elem_bytes);
  std::vector<MPI_Request> sends(static_cast<std::size_t>(n), MPI_REQUEST_NULL);
  const auto* out = static_cast<const unsigned char*>(data);
  for (int k = 0; k < n; ++k)
    MPI_Issend(out + static_cast<std::size_t>(k) * elem_bytes, bytes, MPI_BYTE, dests[k], tag, comm.comm,
               &sends[static_cast<std::size_t>(k)]);
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool in_barrier = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, comm.comm, &arrived, &status);
    if (arrived) {
      const std::size_t at = received->size();
      received->resize(at + elem_bytes);
      MPI_Recv(received->data() + at, bytes, MPI_BYTE, status.MPI_SOURCE, tag, comm.comm, MPI_STATUS_IGNORE);
      sources->push_back(status.MPI_SOURCE);
      continue;
    }
    int done = 0;
    if (!in_barrier) {
      // Synchronous sends complete once matched: then this rank has delivered everything.
      MPI_Testall(n, sends.data(), &done, MPI_STATUSES_IGNORE);
      if (done) {
        MPI_Ibarrier(comm.comm, &barrier);
        in_barrier = true;
      }
    } else {
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) return;  // every rank's sends were matched: nothing more can arrive
    }
  }
}

CommPtr sharedMemoryComm(const CommHandle& comm) {
  auto out = std::make_shared<CommHandle>();
  MPI_Comm_split_type(comm.comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &out->comm);
  out->owned = true;
  return out;
}

bool mpiIsCudaAware() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

void cancel(RequestHandle& request) noexcept {
  if (request.request == MPI_REQUEST_NULL) return;
  MPI_Cancel(&request.request);
  MPI_Request_free(&request.request);
}

void destroyRequest(RequestHandle* request) noexcept { delete request; }

// ---- shared files (MPI-IO) -----------------------------------------------------------------------

struct FileHandle {
  MPI_File file = MPI_FILE_NULL;
  bool writing = false;  // only a file opened for writing is synced (MPI refuses it otherwise)
};

namespace {

// "what failed: MPI's message", or empty on success. MPI-IO returns errors (its default handler
// is MPI_ERRORS_RETURN), so every call is checked here.
std::string fileProblem(int code, const char* what) {
  if (code == MPI_SUCCESS) return {};
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return fmt::format("{}: {}", what, std::string(text, static_cast<std::size_t>(length)));
}

// The system's reason for the last failed transfer, as the MPI library left it in errno (MPI's own
// error classes say "I/O error", not "No space left on device").
std::string systemReason(int saved_errno) {
  return saved_errno == 0 ? std::string() : fmt::format(" ({})", std::strerror(saved_errno));
}

// Transfers in calls of at most 1 GiB (an int counts the bytes), each checked for the bytes it
// moved: OpenMPI's OMPIO reports a write that the disk cut short as a success (issue 29), so a
// short count is tried again, and the second try names the system's reason.
constexpr std::uint64_t kChunkBytes = std::uint64_t{1} << 30;

template <class Call>
std::string inChunks(const char* what, std::uint64_t offset, std::uint64_t bytes, Call&& call) {
  std::uint64_t done = 0;
  int tries_without_progress = 0;
  while (done < bytes) {
    const int count = static_cast<int>(std::min(bytes - done, kChunkBytes));
    MPI_Status status;
    errno = 0;
    const int code = call(offset + done, done, count, &status);
    const int saved_errno = errno;
    if (code != MPI_SUCCESS)
      return fmt::format("{} of {} bytes at byte {}: {}{}", what, bytes - done, offset + done,
                         fileProblem(code, "MPI-IO"), systemReason(saved_errno));
    MPI_Count moved = 0;
    if (MPI_Get_elements_x(&status, MPI_BYTE, &moved) != MPI_SUCCESS || moved == MPI_UNDEFINED) moved = count;
    done += static_cast<std::uint64_t>(std::max<MPI_Count>(moved, 0));
    if (moved > 0) tries_without_progress = 0;
    if (moved < count && ++tries_without_progress > 1)
      return fmt::format("{} stopped at byte {} of [{}, {}){}", what, offset + done, offset, offset + bytes,
                         saved_errno ? systemReason(saved_errno) : std::string(" (the file system took no more)"));
  }
  return {};
}

}  // namespace

FileHandle* fileOpen(const CommHandle& comm, const char* path, FileMode mode, std::string* problem) {
  auto handle = std::make_unique<FileHandle>();
  handle->writing = mode == FileMode::kCreate;
  const int amode = mode == FileMode::kCreate ? (MPI_MODE_CREATE | MPI_MODE_WRONLY) : MPI_MODE_RDONLY;
  errno = 0;
  *problem = fileProblem(MPI_File_open(comm.comm, path, amode, MPI_INFO_NULL, &handle->file), "open");
  if (!problem->empty()) {
    *problem += systemReason(errno);
    return nullptr;
  }
  // Collective: a failure here is returned with the file open, for every rank to close it together.
  if (mode == FileMode::kCreate) *problem = fileProblem(MPI_File_set_size(handle->file, 0), "truncate");
  return handle.release();
}

std::string fileWriteAt(FileHandle& file, std::uint64_t offset, const void* data, std::uint64_t bytes) {
  if (std::string fault = injectedWriteFault(worldRankForMessages()); !fault.empty())
    return fmt::format("write of {} bytes at byte {}: {}", bytes, offset, fault);
  return inChunks("write", offset, bytes, [&](std::uint64_t at, std::uint64_t skip, int count, MPI_Status* status) {
    return MPI_File_write_at(file.file, static_cast<MPI_Offset>(at), static_cast<const char*>(data) + skip, count,
                             MPI_BYTE, status);
  });
}

std::string fileReadAt(FileHandle& file, std::uint64_t offset, void* data, std::uint64_t bytes) {
  std::string problem =
      inChunks("read", offset, bytes, [&](std::uint64_t at, std::uint64_t skip, int count, MPI_Status* status) {
        return MPI_File_read_at(file.file, static_cast<MPI_Offset>(at), static_cast<char*>(data) + skip, count,
                                MPI_BYTE, status);
      });
  if (problem.starts_with("read stopped")) return fmt::format("read: the file ends before byte {}", offset + bytes);
  return problem;
}

std::string fileSize(FileHandle& file, std::uint64_t* bytes) {
  MPI_Offset size = 0;
  std::string problem = fileProblem(MPI_File_get_size(file.file, &size), "size");
  *bytes = static_cast<std::uint64_t>(size);
  return problem;
}

std::string fileClose(FileHandle* file) {
  std::unique_ptr<FileHandle> owned(file);
  errno = 0;
  std::string problem = owned->writing ? fileProblem(MPI_File_sync(owned->file), "sync") : std::string();
  if (!problem.empty()) problem += systemReason(errno);
  const std::string closing = fileProblem(MPI_File_close(&owned->file), "close");
  return problem.empty() ? closing : problem;
}

void fileAbandon(FileHandle* file) noexcept {
  if (!file) return;
  if (file->file != MPI_FILE_NULL) MPI_File_close(&file->file);
  delete file;
}

}  // namespace grove::detail
