#pragma once
/// @file
/// The only interface between grove and a message-passing library. Two implementations exist:
/// src/comm/mpi_backend.cpp and src/comm/serial_backend.cpp; CMake compiles exactly one. Element
/// types are reduced to (bytes per element) or (scalar kind, count), so no header needs mpi.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace grove::detail {

enum class ScalarKind { Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float, Double, LongDouble };
enum class ReduceOp { Sum, Min, Max };

struct CommHandle;     // wraps an MPI communicator (or the serial stand-in)
struct RequestHandle;  // wraps a pending nonblocking operation
using CommPtr = std::shared_ptr<CommHandle>;

// Runtime.
bool backendHasMpi() noexcept;
void backendInitialize(int* argc, char*** argv, int* provided_thread_level, bool* we_initialized);
void backendFinalize();
[[noreturn]] void backendAbortAll(int exit_code) noexcept;
bool backendIsInitialized() noexcept;

// Communicators.
CommPtr worldComm();
CommPtr splitComm(const CommHandle& comm, int color, int key);
int commRank(const CommHandle& comm);
int commSize(const CommHandle& comm);
// The communicator's MPI_Comm, as a pointer to it (null in the serial build): for code that
// includes mpi.h itself, such as FDPS programs asking PS::Comm::getCommunicator().
const void* nativeComm(const CommHandle& comm) noexcept;
// A handle over an MPI_Comm (given by pointer) that the caller keeps alive and frees.
CommPtr adoptNativeComm(const void* native_comm);
// The ranks listed, in that order, as a new communicator (collective over comm); null on the
// ranks not listed.
CommPtr subsetComm(const CommHandle& comm, const int* ranks, int n);

// Collectives. Counts are in elements of elem_bytes bytes each and must fit an int.
void barrier(const CommHandle& comm);
void allreduce(const CommHandle& comm, const void* in, void* out, std::size_t count, ScalarKind kind,
               ReduceOp op);
void broadcast(const CommHandle& comm, void* buffer, int count, std::size_t elem_bytes, int root);
void allgather(const CommHandle& comm, const void* in, void* out, std::size_t elem_bytes);
void allgatherv(const CommHandle& comm, const void* in, int count, void* out, const int* counts,
                const int* displacements, std::size_t elem_bytes);
void gatherv(const CommHandle& comm, const void* in, int count, void* out, const int* counts,
             const int* displacements, std::size_t elem_bytes, int root);
void alltoall(const CommHandle& comm, const void* in, void* out, std::size_t elem_bytes);
void alltoallv(const CommHandle& comm, const void* in, const int* send_counts, const int* send_displacements,
               void* out, const int* recv_counts, const int* recv_displacements, std::size_t elem_bytes);

// Point-to-point.
// The caller owns the returned request; grove::Request releases it with destroyRequest.
RequestHandle* isend(const CommHandle& comm, const void* buffer, int count, std::size_t elem_bytes, int dest,
                     int tag);
RequestHandle* irecv(const CommHandle& comm, void* buffer, int count, std::size_t elem_bytes, int source, int tag);
void wait(RequestHandle& request);
// Sparse exchange (Hoefler, Siebert and Lumsdaine's NBX: synchronous sends, probes, then a
// nonblocking barrier): the n messages of elem_bytes bytes each at data go to dests[k]; the
// messages that reach this rank are appended to *sources and *received (elem_bytes each), in
// arrival order. Collective; no rank learns anything about pairs that exchange nothing, so the
// cost is O(messages) plus a barrier, not O(ranks).
void sparseExchange(const CommHandle& comm, const int* dests, const void* data, int n, std::size_t elem_bytes,
                    std::vector<int>* sources, std::vector<unsigned char>* received);
// Collective: the ranks of comm that share this process's node (shared memory), as a communicator.
CommPtr sharedMemoryComm(const CommHandle& comm);
// Whether the MPI library moves device memory itself (CUDA-aware), as the library reports it at
// run time (false where it cannot say, and in the serial build).
bool mpiIsCudaAware() noexcept;
// Abandons a pending request without waiting (used while an exception unwinds).
void cancel(RequestHandle& request) noexcept;
void destroyRequest(RequestHandle* request) noexcept;

// Shared files: one file that every rank of a communicator opens and writes or reads at its own
// byte offsets (MPI-IO; a plain file in the serial build). Failures come back as a message (empty:
// success) rather than an exception, so the caller can agree on them across ranks before it
// throws (Comm::throwIfAnyFailed); a collective call is made by every rank even after its own
// failure. grove/comm/shared_file.hpp wraps these in a class.
struct FileHandle;
enum class FileMode { kCreate, kRead };
// Collective. Creates (truncating) or opens path; null with *problem set when it could not be
// opened; a handle with *problem set when it was opened but not truncated (close it on every rank).
FileHandle* fileOpen(const CommHandle& comm, const char* path, FileMode mode, std::string* problem);
// Independent: this rank alone writes or reads (checked for the bytes moved: a short write is an
// error naming the system's reason; a write fails on purpose under GROVE_FAULT_INJECT,
// grove/core/fault_injection.hpp). There is no collective write: MPI-IO libraries leave the
// other ranks of a collective write waiting when it fails on one (issue 29), so every rank
// writes alone and the ranks agree on the outcome afterwards.
std::string fileWriteAt(FileHandle& file, std::uint64_t offset, const void* data, std::uint64_t bytes);
std::string fileReadAt(FileHandle& file, std::uint64_t offset, void* data, std::uint64_t bytes);
std::string fileSize(FileHandle& file, std::uint64_t* bytes);
// Collective: flushes what was written to the disk (MPI_File_sync) and closes; frees the handle.
std::string fileClose(FileHandle* file);
// Closes without reporting (an exception unwinds past an open file).
void fileAbandon(FileHandle* file) noexcept;

struct RequestDeleter {
  void operator()(RequestHandle* r) const noexcept { destroyRequest(r); }
};

}  // namespace grove::detail
