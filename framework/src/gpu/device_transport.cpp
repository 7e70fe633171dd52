// grove::gpu::DeviceTransport (grove/gpu/device_transport.hpp): how device buffers travel
// between ranks, per pair: CUDA IPC within a node, CUDA-aware MPI, or pinned staging.
#include "grove/gpu/device_transport.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "grove/core/error.hpp"

namespace grove::gpu {

namespace {

constexpr int kPayloadTag = 0x6790, kOfferTag = 0x6791, kAckTag = 0x6792;
constexpr std::size_t kAlignment = 256;

std::size_t aligned(std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

std::optional<TransportChoice> choiceNamed(const std::string& name) {
  if (name == "auto") return TransportChoice::kAuto;
  if (name == "staged") return TransportChoice::kStaged;
  if (name == "mpi") return TransportChoice::kMpi;
  if (name == "ipc") return TransportChoice::kIpc;
  return std::nullopt;
}

// What a rank tells the others when the transport is made: its node (the communicator rank of
// the node's first rank) and its device's PCI bus id, by which another process finds the same
// device among its own ordinals.
struct RankPlace {
  int node = 0;
  char bus_id[32] = {};
};

}  // namespace

const char* transportName(TransportKind kind) {
  switch (kind) {
    case TransportKind::kStaged: return "staged";
    case TransportKind::kMpi: return "mpi";
    case TransportKind::kIpc: return "ipc";
  }
  return "?";
}

DeviceTransport::DeviceTransport(const Comm& comm, TransportChoice choice) : comm_(comm) {
  check(cudaGetDevice(&device_), "cudaGetDevice");
  const int ranks = comm.size(), me = comm.rank();

  // Rank 0's choice, the environment's narrowing of "auto" included, holds for every rank: the
  // two sides of a pair must agree on its way.
  std::optional<std::string> problem;
  if (me == 0 && choice == TransportChoice::kAuto) {
    if (const char* env = std::getenv("GROVE_GPU_TRANSPORT")) {
      if (const auto named = choiceNamed(env)) choice = *named;
      else problem = fmt::format("GROVE_GPU_TRANSPORT is '{}'; expected auto, staged, mpi or ipc", env);
    }
  }
  comm.throwIfAnyFailed(problem, "DeviceTransport");
  int code = static_cast<int>(choice);
  comm.broadcast(code, 0);
  choice = static_cast<TransportChoice>(code);
  // The MPI library's CUDA support, agreed (all ranks run the same library, but say so once).
  const bool cuda_aware = comm.allreduceMin(mpiIsCudaAware() ? 1 : 0) == 1;
  if (choice == TransportChoice::kMpi && !cuda_aware)
    comm.throwIfAnyFailed(std::string("GROVE_GPU_TRANSPORT=mpi (or TransportChoice::kMpi) needs a CUDA-aware MPI "
                                      "library; this one does not report CUDA support (MPIX_Query_cuda_support)"),
                          "DeviceTransport");

  // Which ranks share this node, and whose devices this process can map.
  const Comm node = comm.sharedMemory();
  int node_first = me;
  node.broadcast(node_first, 0);
  RankPlace place;
  place.node = node_first;
  check(cudaDeviceGetPCIBusId(place.bus_id, sizeof(place.bus_id), device_), "cudaDeviceGetPCIBusId");
  const std::vector<RankPlace> places = comm.allgather(place);
  std::vector<int> members;  // the node's ranks, ascending: the node communicator's order
  for (int r = 0; r < ranks; ++r)
    if (places[static_cast<std::size_t>(r)].node == node_first) members.push_back(r);
  std::vector<char> can_map(members.size(), 0);
  for (std::size_t k = 0; k < members.size(); ++k) {
    const int r = members[k];
    if (r == me || choice == TransportChoice::kStaged || choice == TransportChoice::kMpi) continue;
    int ordinal = -1;
    if (cudaDeviceGetByPCIBusId(&ordinal, places[static_cast<std::size_t>(r)].bus_id) != cudaSuccess) {
      cudaGetLastError();  // the peer's device is not visible here: no IPC with it
      continue;
    }
    int reach = ordinal == device_ ? 1 : 0;
    if (!reach && cudaDeviceCanAccessPeer(&reach, device_, ordinal) != cudaSuccess) {
      cudaGetLastError();
      reach = 0;
    }
    can_map[k] = static_cast<char>(reach);
  }
  // A pair uses IPC only when each side can map the other's device.
  const std::vector<char> matrix = node.allgatherv(std::span<const char>(can_map));
  const std::size_t m = members.size();
  const auto my_k = static_cast<std::size_t>(std::find(members.begin(), members.end(), me) - members.begin());
  require(matrix.size() == m * m, "DeviceTransport", "node members disagree ({} flags for {} ranks)", matrix.size(), m);

  kinds_.assign(static_cast<std::size_t>(ranks), cuda_aware && choice != TransportChoice::kStaged &&
                                                         choice != TransportChoice::kIpc
                                                     ? TransportKind::kMpi
                                                     : TransportKind::kStaged);
  for (std::size_t k = 0; k < m; ++k)
    if (k != my_k && matrix[my_k * m + k] && matrix[k * m + my_k])
      kinds_[static_cast<std::size_t>(members[k])] = TransportKind::kIpc;
}

DeviceTransport::~DeviceTransport() {
  for (auto& [rank, opened] : opened_) cudaIpcCloseMemHandle(opened.pointer);
}

std::array<int, 3> DeviceTransport::peersByKind() const {
  std::array<int, 3> count{};
  for (int r = 0; r < comm_.size(); ++r)
    if (r != comm_.rank()) ++count[static_cast<std::size_t>(kinds_[static_cast<std::size_t>(r)])];
  return count;
}

std::byte* DeviceTransport::sendArena(std::size_t bytes) {
  require(!started_, "DeviceTransport::sendArena", "the previous exchange is not finished");
  if (arena_.capacity() < bytes) {
    // A peer may hold the old allocation mapped: keep it until the transport goes.
    if (arena_exported_) retired_arenas_.push_back(std::move(arena_));
    arena_.allocate(std::max(aligned(bytes), arena_.capacity() + arena_.capacity() / 2));
    arena_exported_ = false;
  }
  return arena_.data();
}

void* DeviceTransport::openPeerAllocation(int rank, const cudaIpcMemHandle_t& handle) {
  auto it = opened_.find(rank);
  if (it != opened_.end()) {
    if (std::memcmp(&it->second.handle, &handle, sizeof(handle)) == 0) return it->second.pointer;
    // The peer's arena grew; it keeps the old one alive, so closing the mapping is safe.
    cudaIpcCloseMemHandle(it->second.pointer);
    opened_.erase(it);
  }
  void* pointer = nullptr;
  check(cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess),
        "cudaIpcOpenMemHandle (a peer's LET or exchange buffer; GROVE_GPU_TRANSPORT=staged avoids CUDA IPC)");
  opened_[rank] = {handle, pointer};
  return pointer;
}

void DeviceTransport::start(std::span<const SendBlock> sends, std::span<const ReceiveBlock> receives,
                            cudaStream_t stream, cudaEvent_t sends_ready) {
  require(!started_, "DeviceTransport::start", "the previous exchange is not finished");
  (void)stream;
  bytes_sent_ = {};
  bytes_received_ = {};
  requests_.clear();
  ipc_receives_.clear();
  staged_receives_.clear();
  staged_receive_at_.clear();
  offers_in_.clear();
  offers_out_.clear();
  ack_peers_.clear();

  // Receives first, so that no send waits for its receive to be posted.
  std::size_t staged_in = 0, n_offers = 0;
  for (const ReceiveBlock& b : receives) {
    if (b.bytes == 0) continue;
    if (kind(b.rank) == TransportKind::kStaged) staged_in += aligned(b.bytes);
    if (kind(b.rank) == TransportKind::kIpc) ++n_offers;
  }
  if (uploads_pending_) {  // the last exchange's uploads read the receive staging
    arrived_.synchronize();
    uploads_pending_ = false;
  }
  receive_staging_.reserve(staged_in);
  offers_in_.resize(n_offers);  // sized before any receive points into it
  std::size_t at = 0;
  for (const ReceiveBlock& b : receives) {
    if (b.bytes == 0) continue;
    const auto k = static_cast<std::size_t>(kind(b.rank));
    bytes_received_[k] += static_cast<std::int64_t>(b.bytes);
    switch (kind(b.rank)) {
      case TransportKind::kMpi:
        requests_.push_back(comm_.irecv(std::span<std::byte>(static_cast<std::byte*>(b.data), b.bytes), b.rank,
                                        kPayloadTag));
        break;
      case TransportKind::kStaged:
        staged_receives_.push_back(b);
        staged_receive_at_.push_back(at);
        requests_.push_back(
            comm_.irecv(std::span<std::byte>(receive_staging_.data() + at, b.bytes), b.rank, kPayloadTag));
        at += aligned(b.bytes);
        break;
      case TransportKind::kIpc:
        requests_.push_back(comm_.irecv(std::span<Offer>(&offers_in_[ipc_receives_.size()], 1), b.rank, kOfferTag));
        ipc_receives_.push_back(b);
        break;
    }
  }

  // The sends' bytes are ready once the packing is.
  check(cudaEventSynchronize(sends_ready), "cudaEventSynchronize (sends ready)");
  std::size_t staged_out = 0;
  std::set<int> ipc_targets;
  for (const SendBlock& b : sends) {
    if (b.bytes == 0) continue;
    require(b.offset + b.bytes <= arena_.capacity(), "DeviceTransport::start",
            "a send block [{}, {}) lies outside the {}-byte send arena", b.offset, b.offset + b.bytes,
            arena_.capacity());
    bytes_sent_[static_cast<std::size_t>(kind(b.rank))] += static_cast<std::int64_t>(b.bytes);
    if (kind(b.rank) == TransportKind::kStaged) staged_out += aligned(b.bytes);
    if (kind(b.rank) == TransportKind::kIpc) ipc_targets.insert(b.rank);
  }
  if (!ipc_targets.empty() && !arena_exported_) {
    check(cudaIpcGetMemHandle(&arena_handle_, arena_.data()), "cudaIpcGetMemHandle (send arena)");
    arena_exported_ = true;
  }
  // Staged: every block's download is queued at once, each sent as soon as it has landed.
  send_staging_.reserve(staged_out);
  std::vector<std::pair<const SendBlock*, std::size_t>> staged_sends;
  std::size_t out_at = 0;
  for (const SendBlock& b : sends) {
    if (b.bytes == 0 || kind(b.rank) != TransportKind::kStaged) continue;
    check(cudaMemcpyAsync(send_staging_.data() + out_at, arena_.data() + b.offset, b.bytes, cudaMemcpyDeviceToHost,
                          copy_stream_.get()),
          "cudaMemcpyAsync (staged send)");
    if (block_downloaded_.size() <= staged_sends.size()) block_downloaded_.emplace_back();
    block_downloaded_[staged_sends.size()].record(copy_stream_.get());
    staged_sends.emplace_back(&b, out_at);
    out_at += aligned(b.bytes);
  }
  std::size_t staged_k = 0;
  ack_tokens_out_.assign(1, 1);
  for (const SendBlock& b : sends) {
    if (b.bytes == 0) continue;
    switch (kind(b.rank)) {
      case TransportKind::kMpi:
        requests_.push_back(
            comm_.isend(std::span<const std::byte>(arena_.data() + b.offset, b.bytes), b.rank, kPayloadTag));
        break;
      case TransportKind::kStaged: {
        block_downloaded_[staged_k].synchronize();
        const std::size_t from = staged_sends[staged_k++].second;
        requests_.push_back(
            comm_.isend(std::span<const std::byte>(send_staging_.data() + from, b.bytes), b.rank, kPayloadTag));
        break;
      }
      case TransportKind::kIpc:
        offers_out_.push_back({arena_handle_, b.offset, b.bytes});
        break;
    }
  }
  // Offers: sized first, then sent (their storage must not move while in flight).
  std::size_t offer_k = 0;
  for (const SendBlock& b : sends)
    if (b.bytes > 0 && kind(b.rank) == TransportKind::kIpc)
      requests_.push_back(comm_.isend(std::span<const Offer>(&offers_out_[offer_k++], 1), b.rank, kOfferTag));
  // Each rank that pulls from the arena says when it is done.
  ack_peers_.assign(ipc_targets.begin(), ipc_targets.end());
  ack_tokens_in_.assign(ack_peers_.size(), 0);
  acks_in_.clear();
  for (std::size_t k = 0; k < ack_peers_.size(); ++k)
    acks_in_.push_back(comm_.irecv(std::span<char>(&ack_tokens_in_[k], 1), ack_peers_[k], kAckTag));
  started_ = true;
}

void DeviceTransport::finish(cudaStream_t stream) {
  require(started_, "DeviceTransport::finish", "no exchange was started");
  // Arrivals are moved on the transport's own copy stream, so that waiting for them never waits
  // for the caller's work (the local force kernel runs meanwhile); `stream` then waits for them.
  // Staged blocks are uploaded one by one as they come in (in posting order), IPC offers pulled;
  // MPI's own receives need nothing more.
  std::size_t staged_k = 0, ipc_k = 0;
  std::set<int> pulled_from;
  for (Request& r : requests_) r.wait();
  for (const ReceiveBlock& b : staged_receives_) {
    check(cudaMemcpyAsync(b.data, receive_staging_.data() + staged_receive_at_[staged_k++], b.bytes,
                          cudaMemcpyHostToDevice, copy_stream_.get()),
          "cudaMemcpyAsync (staged receive)");
  }
  for (const ReceiveBlock& b : ipc_receives_) {
    const Offer& offer = offers_in_[ipc_k++];
    require(offer.bytes == b.bytes, "DeviceTransport::finish",
            "rank {} offers {} bytes where {} were expected (the two sides listed different blocks)", b.rank,
            offer.bytes, b.bytes);
    const auto* source = static_cast<const std::byte*>(openPeerAllocation(b.rank, offer.handle)) + offer.offset;
    check(cudaMemcpyAsync(b.data, source, b.bytes, cudaMemcpyDeviceToDevice, copy_stream_.get()),
          "cudaMemcpyAsync (IPC pull)");
    pulled_from.insert(b.rank);
  }
  arrived_.record(copy_stream_.get());
  check(cudaStreamWaitEvent(stream, arrived_.get(), 0), "cudaStreamWaitEvent (arrivals)");
  uploads_pending_ = !staged_receives_.empty();
  // A sender reuses its arena after our acknowledgement: the pulls must be done by then.
  if (!pulled_from.empty()) arrived_.synchronize();
  acks_out_.clear();
  for (int r : pulled_from) acks_out_.push_back(comm_.isend(std::span<const char>(ack_tokens_out_.data(), 1), r, kAckTag));
  for (Request& r : acks_out_) r.wait();
  for (Request& r : acks_in_) r.wait();
  requests_.clear();
  acks_in_.clear();
  acks_out_.clear();
  offers_out_.clear();
  started_ = false;
}

}  // namespace grove::gpu
