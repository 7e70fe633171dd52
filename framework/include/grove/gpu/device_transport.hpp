#pragma once
/// @file
/// grove::gpu::DeviceTransport: device buffers from rank to rank, the transport of the
/// @verbatim
/// GPU-resident pipeline's LET payloads and exchanged particles. One small interface (post the
/// sends and receives of one exchange, then wait for them) over three ways to move the bytes,
/// chosen per pair of ranks when the transport is made:
///
///   kIpc      the two ranks share a node and their devices reach each other (or it is one
///             device): the receiver maps the sender's buffer (CUDA IPC, opened once and cached)
///             and copies device to device on its own stream; MPI carries only a 64-byte offer
///             and an acknowledgement. No byte crosses the host.
///   kMpi      the MPI library is CUDA-aware (MPIX_Query_cuda_support): MPI moves the device
///             buffers itself, also between nodes.
///   kStaged   otherwise: device -> pinned host -> MPI -> pinned host -> device. Each block's
///             download is its own asynchronous copy, sent as soon as it lands, and each arrival
///             is uploaded as soon as it is in, so copies overlap the messages of other blocks.
///
/// CUDA IPC rather than NCCL: it needs nothing beyond the CUDA runtime that grove::gpu already
/// links (NCCL is a separate library, absent from many installations and from our CI), it is
/// point to point as the sparse LET is (NCCL's send/receive needs a communicator made
/// collectively over all ranks), and it leaves the data where the receiver wants it, in its own
/// stream order.
///
/// GROVE_GPU_TRANSPORT=staged|mpi|ipc|auto (read on rank 0, the same for every rank) narrows the
/// choice: staged stages every pair (the tested fallback), mpi requires a CUDA-aware library,
/// ipc uses IPC where it can and staging elsewhere, auto (default) prefers IPC, then MPI.
///
///   grove::gpu::DeviceTransport transport(comm);                    // collective
///   std::byte* out = transport.sendArena(bytes);                    // pack the sends here
///   transport.start(sends, receives, stream, sends_ready_event);     // every rank of comm
///   ... other work on the device ...
///   transport.finish(stream);   // receives are in device memory for later work on `stream`
///
/// Sends are byte ranges of the transport's own send arena, because CUDA IPC exports whole
/// allocations and an exported one must outlive every peer's mapping of it: the arena grows by
/// retiring the old allocation (freed with the transport), never by freeing it. Receives go to
/// the caller's device memory. Both sides must list a pair's blocks in the same order with the
/// same sizes (they know them from counts exchanged before). Needs the CUDA runtime headers, not
/// nvcc; compiled into grove::gpu.
/// @endverbatim
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "grove/comm/comm.hpp"
#include "grove/gpu/cuda_resources.hpp"

namespace grove::gpu {

/// How the bytes between one pair of ranks travel (see the top of this file).
enum class TransportKind {
  kStaged,  ///< device -> pinned host -> MPI -> pinned host -> device
  kMpi,     ///< CUDA-aware MPI on the device buffers
  kIpc      ///< CUDA IPC: the receiver copies from the sender's mapped buffer
};
/// What a DeviceTransport may use: kAuto prefers IPC, then MPI, then staging; the others narrow
/// the choice as GROVE_GPU_TRANSPORT does (see the top of this file).
enum class TransportChoice { kAuto, kStaged, kMpi, kIpc };

/// "staged", "mpi" or "ipc".
const char* transportName(TransportKind kind);

/// A block to `rank`: bytes [offset, offset + bytes) of the send arena.
struct SendBlock {
  int rank = 0;            ///< the receiving rank
  std::size_t offset = 0;  ///< where the block starts in the send arena
  std::size_t bytes = 0;   ///< its length
};
/// A block from `rank`, into device memory at data.
struct ReceiveBlock {
  int rank = 0;          ///< the sending rank
  void* data = nullptr;  ///< where the block lands (device memory)
  std::size_t bytes = 0; ///< its length: what the sender sends
};

/// Device buffers from rank to rank (see the top of this file): one exchange at a time, start()
/// then finish(), collective over the communicator it was made with.
class DeviceTransport {
 public:
  /// Collective over comm. Decides each pair's way (see the top of this file) from what every
  /// rank reports about its node and device; rank 0's choice (and GROVE_GPU_TRANSPORT there)
  /// holds for all.
  explicit DeviceTransport(const Comm& comm, TransportChoice choice = TransportChoice::kAuto);
  ~DeviceTransport();
  DeviceTransport(const DeviceTransport&) = delete;
  DeviceTransport& operator=(const DeviceTransport&) = delete;

  /// The send arena, at least `bytes` long (256-byte aligned; contents lost when it grows). Call
  /// before packing and before start(); the previous exchange must be finished.
  std::byte* sendArena(std::size_t bytes);

  /// Posts one exchange (every rank of comm calls it, also with nothing to move): the sends'
  /// bytes are read once `sends_ready` (recorded on the producing stream) has completed; the
  /// host waits for that event, not for later work on the stream. Receives land in device memory
  /// by finish(). Blocks of 0 bytes are skipped on both sides.
  void start(std::span<const SendBlock> sends, std::span<const ReceiveBlock> receives, cudaStream_t stream,
             cudaEvent_t sends_ready);
  /// Waits for this exchange's messages; the received bytes are in device memory for work
  /// enqueued on `stream` after this call (copies may still be in flight on it). Returns once
  /// this rank's sends may be overwritten.
  void finish(cudaStream_t stream);

  /// How bytes to and from `rank` travel.
  TransportKind kind(int rank) const { return kinds_[static_cast<std::size_t>(rank)]; }
  /// How many other ranks this rank reaches each way (staged, mpi, ipc).
  std::array<int, 3> peersByKind() const;
  /// Bytes this rank sent each way in the last exchange (staged, mpi, ipc).
  const std::array<std::int64_t, 3>& bytesSent() const { return bytes_sent_; }
  /// Bytes this rank received each way in the last exchange (staged, mpi, ipc).
  const std::array<std::int64_t, 3>& bytesReceived() const { return bytes_received_; }
  /// Page-locked host memory held for staging.
  std::size_t pinnedBytes() const { return send_staging_.bytes() + receive_staging_.bytes(); }

 private:
  struct Offer {  // an IPC block ready to be pulled: the sender's allocation and the range in it
    cudaIpcMemHandle_t handle;
    std::uint64_t offset, bytes;
  };
  struct Opened {  // a peer's allocation mapped here
    cudaIpcMemHandle_t handle;
    void* pointer;
  };
  void* openPeerAllocation(int rank, const cudaIpcMemHandle_t& handle);

  Comm comm_;
  int device_ = 0;
  std::vector<TransportKind> kinds_;
  Stream copy_stream_;  // staged downloads
  PinnedArray<std::byte> send_staging_, receive_staging_;
  Event arrived_;  // the last exchange's uploads and pulls, on copy_stream_
  bool uploads_pending_ = false;  // its uploads still read the receive staging
  std::vector<Event> block_downloaded_;
  std::vector<Request> requests_, acks_out_, acks_in_;
  std::vector<Offer> offers_in_, offers_out_;
  DeviceArray<std::byte> arena_;
  std::vector<DeviceArray<std::byte>> retired_arenas_;  // exported once: freed with the transport
  cudaIpcMemHandle_t arena_handle_{};
  bool arena_exported_ = false;
  std::vector<ReceiveBlock> ipc_receives_, staged_receives_;
  std::vector<std::size_t> staged_receive_at_;
  std::vector<int> ack_peers_;
  std::vector<char> ack_tokens_in_, ack_tokens_out_;
  std::map<int, Opened> opened_;   // per peer rank: its arena, mapped here
  std::array<std::int64_t, 3> bytes_sent_{}, bytes_received_{};
  bool started_ = false;
};

}  // namespace grove::gpu
