#pragma once
/// @file
/// grove::Comm: typed collectives and point-to-point messages over trivially copyable types.
/// Every message grove sends goes through this class; with GROVE_MPI=OFF the same calls run on a
/// serial backend with one rank.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <exception>
#include <numeric>
#include <optional>
#include <string>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "grove/comm/backend.hpp"
#include "grove/comm/reduction.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"

namespace grove {

/// A type that grove::Comm moves as plain bytes: trivially copyable.
template <class T>
concept Transferable = std::is_trivially_copyable_v<T>;

/// What this process has moved through grove::Comm since the last reset: messages (isend, irecv
/// and sparse exchanges; a receive counts the bytes posted for it) and collective calls, with the
/// bytes of this rank's result buffers (an allgather of P values counts P values). Scaling tests
/// read it to check that a step's traffic per rank stays bounded as the rank count grows.
struct CommTraffic {
  /// Messages sent (isend, sparse exchanges).
  std::int64_t messages_sent = 0, bytes_sent = 0;
  /// @var bytes_sent
  /// Bytes of the messages sent.

  /// Messages received (irecv posted, sparse-exchange messages that arrived).
  std::int64_t messages_received = 0, bytes_received = 0;
  /// @var bytes_received
  /// Bytes received (for irecv, the bytes posted).

  /// Collective calls (a sparse exchange counts one, for its barrier).
  std::int64_t collectives = 0, collective_bytes = 0;
  /// @var collective_bytes
  /// Bytes of this rank's result buffers of the collective calls.

  std::int64_t alltoalls = 0;  ///< of the collectives: all-to-all exchanges (O(P) messages per rank)
};
/// This process's traffic counters (one per process, not thread-safe), updated by every Comm call.
inline CommTraffic& commTraffic() {
  static CommTraffic traffic;
  return traffic;
}
/// Sets every counter of commTraffic() to 0.
inline void resetCommTraffic() { commTraffic() = {}; }

/// One message of a sparse exchange: to (or from) `rank`.
template <class T>
struct SparseMessage {
  int rank = 0;  ///< the destination (sending) or the source (received)
  T value{};     ///< the message
};

/// A pending nonblocking send or receive. Its buffer must stay alive and untouched until wait().
/// Destroying a pending request waits for it, so a buffer is never freed under a live transfer.
/// Movable, not copyable.
class Request {
 public:
  Request() = default;  ///< no pending operation
  /// Takes ownership of a backend request (Comm::isend and Comm::irecv make them).
  explicit Request(detail::RequestHandle* handle) : handle_(handle) {}
  Request(Request&&) noexcept = default;  ///< takes over other's pending operation
  /// Waits for this request's pending operation, then takes over other's.
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      wait();
      handle_ = std::move(other.handle_);
    }
    return *this;
  }
  /// Waits for a pending operation; while an exception unwinds, cancels it instead.
  ~Request() {
    if (!handle_) return;
    // While an exception unwinds, the matching message may never come: cancel, don't wait.
    if (std::uncaught_exceptions() > 0) detail::cancel(*handle_);
    else detail::wait(*handle_);
  }
  /// Blocks until the operation completes (the buffer may then be reused); nothing when none is
  /// pending.
  void wait() {
    if (handle_) {
      detail::wait(*handle_);
      handle_.reset();
    }
  }
  /// Whether an operation is pending (not yet waited for).
  bool pending() const noexcept { return static_cast<bool>(handle_); }

 private:
  std::unique_ptr<detail::RequestHandle, detail::RequestDeleter> handle_;
};

/// Waits for every request, in order.
inline void waitAll(std::span<Request> requests) {
  for (auto& r : requests) r.wait();
}

/// A communicator: a group of ranks with typed collectives and point-to-point messages. Copies
/// share the underlying communicator. Collective calls must be made by every rank of the
/// communicator, in the same order; counts of elements must fit an int (else grove::Error).
class Comm {
 public:
  /// The world communicator (all ranks of the run).
  Comm() : handle_(detail::worldComm()) {}
  /// The world communicator (all ranks of the run).
  static Comm world() { return Comm(); }

  /// This process's rank in the communicator, 0 to size() - 1.
  int rank() const { return detail::commRank(*handle_); }
  /// The number of ranks.
  int size() const { return detail::commSize(*handle_); }
  /// Whether rank() is 0.
  bool isRoot() const { return rank() == 0; }

  /// Collective: returns once every rank has entered it.
  void barrier() const {
    countCollective(0);
    detail::barrier(*handle_);
  }

  /// Collective: ranks with equal colour (>= 0) form one new communicator, ordered by key (then
  /// by old rank). Throws grove::Error for a negative colour.
  Comm split(int color, int key) const {
    require(color >= 0, "Comm::split", "colour must be non-negative, got {} (every rank joins some communicator)",
            color);
    return Comm(detail::splitComm(*handle_, color, key));
  }

  /// A communicator over an MPI_Comm, given by pointer, that the caller keeps alive (code that
  /// holds MPI handles itself, such as FDPS's CommInfo); an error for MPI_COMM_NULL.
  static Comm fromNative(const void* native_comm) { return Comm(detail::adoptNativeComm(native_comm)); }
  /// Collective: the ranks listed, in that order, as a new communicator; nothing on the others.
  /// Every rank passes the same list. Throws grove::Error for a rank outside [0, size()).
  std::optional<Comm> subset(std::span<const int> ranks) const {
    for (int r : ranks) require(r >= 0 && r < size(), "Comm::subset", "rank {} is outside [0, {})", r, size());
    detail::CommPtr handle = detail::subsetComm(*handle_, ranks.data(), static_cast<int>(ranks.size()));
    if (!handle) return std::nullopt;
    return Comm(std::move(handle));
  }

  // ---- reductions: T is arithmetic, Vec3, or has a ReductionLayout -------------------------
  /// Collective: the sum of every rank's value (element by element for a ReductionLayout), on
  /// every rank.
  template <Reducible T>
  T allreduceSum(const T& value) const { return allreduceOne(value, detail::ReduceOp::Sum); }
  /// Collective: the minimum over ranks (element by element), on every rank.
  template <Reducible T>
  T allreduceMin(const T& value) const { return allreduceOne(value, detail::ReduceOp::Min); }
  /// Collective: the maximum over ranks (element by element), on every rank.
  template <Reducible T>
  T allreduceMax(const T& value) const { return allreduceOne(value, detail::ReduceOp::Max); }

  /// Collective: the smallest box holding every rank's box, on every rank (an empty box counts for
  /// nothing; empty if all are). One reduction: the minimum of the low corners and of the negated
  /// high corners.
  Boxd allreduceUnion(const Boxd& box) const {
    double corners[6] = {box.low.x, box.low.y, box.low.z, -box.high.x, -box.high.y, -box.high.z};
    allreduceMin(std::span<double>(corners));
    return Boxd{{corners[0], corners[1], corners[2]}, {-corners[3], -corners[4], -corners[5]}};
  }

  /// Collective: element-wise sum of a whole array, in place. Every rank passes the same length.
  template <Reducible T>
  void allreduceSum(std::span<T> values) const { allreduceInPlace(values, detail::ReduceOp::Sum); }
  /// Collective: element-wise minimum of a whole array, in place (same length on every rank).
  template <Reducible T>
  void allreduceMin(std::span<T> values) const { allreduceInPlace(values, detail::ReduceOp::Min); }
  /// Collective: element-wise maximum of a whole array, in place (same length on every rank).
  template <Reducible T>
  void allreduceMax(std::span<T> values) const { allreduceInPlace(values, detail::ReduceOp::Max); }
  /// allreduceSum() of a vector's elements, in place (same length on every rank).
  template <Reducible T>
  void allreduceSum(std::vector<T>& values) const { allreduceSum(std::span<T>(values)); }
  /// allreduceMin() of a vector's elements, in place (same length on every rank).
  template <Reducible T>
  void allreduceMin(std::vector<T>& values) const { allreduceMin(std::span<T>(values)); }
  /// allreduceMax() of a vector's elements, in place (same length on every rank).
  template <Reducible T>
  void allreduceMax(std::vector<T>& values) const { allreduceMax(std::span<T>(values)); }

  // ---- broadcast ------------------------------------------------------------------------------
  /// Collective: root's value, on every rank (every rank passes the same root).
  template <Transferable T>
  void broadcast(T& value, int root = 0) const {
    countCollective(sizeof(T));
    detail::broadcast(*handle_, &value, 1, sizeof(T), root);
  }
  /// Collective: the root's vector, length included, arrives on every rank.
  template <Transferable T>
  void broadcast(std::vector<T>& values, int root = 0) const {
    std::size_t n = values.size();
    broadcast(n, root);
    values.resize(n);
    countCollective(n * sizeof(T));
    detail::broadcast(*handle_, values.data(), checkedCount(n), sizeof(T), root);
  }

  // ---- gathers ----------------------------------------------------------------------------------
  /// Collective: one value from each rank, in rank order, on every rank.
  template <Transferable T>
  std::vector<T> allgather(const T& value) const {
    std::vector<T> out(static_cast<std::size_t>(size()));
    countCollective(out.size() * sizeof(T));
    detail::allgather(*handle_, &value, out.data(), sizeof(T));
    return out;
  }
  /// Collective: each rank's array, concatenated in rank order, on every rank. counts_out
  /// (optional) gets each rank's length.
  template <class E, class T = std::remove_const_t<E>>
    requires Transferable<T>
  std::vector<T> allgatherv(std::span<E> mine, std::vector<int>* counts_out = nullptr) const {
    const std::vector<int> counts = allgather(checkedCount(mine.size()));
    const std::vector<int> displacements = exclusiveScan(counts);
    std::vector<T> out(static_cast<std::size_t>(displacements.back() + counts.back()));
    countCollective(out.size() * sizeof(T));
    detail::allgatherv(*handle_, mine.data(), counts[static_cast<std::size_t>(rank())], out.data(),
                       counts.data(), displacements.data(), sizeof(T));
    if (counts_out) *counts_out = counts;
    return out;
  }
  /// Collective: each rank's array, concatenated in rank order, on root only (empty elsewhere).
  /// counts_out (optional) gets each rank's length, on every rank.
  template <class E, class T = std::remove_const_t<E>>
    requires Transferable<T>
  std::vector<T> gatherv(std::span<E> mine, int root = 0, std::vector<int>* counts_out = nullptr) const {
    const int my_count = checkedCount(mine.size());
    std::vector<int> counts = allgather(my_count);
    const std::vector<int> displacements = exclusiveScan(counts);
    std::vector<T> out;
    if (rank() == root) out.resize(static_cast<std::size_t>(displacements.back() + counts.back()));
    countCollective(out.size() * sizeof(T));
    detail::gatherv(*handle_, mine.data(), my_count, out.data(), counts.data(), displacements.data(), sizeof(T),
                    root);
    if (counts_out) *counts_out = std::move(counts);
    return out;
  }

  // ---- all-to-all -------------------------------------------------------------------------------
  /// Collective: send[r] goes to rank r; the result's [r] came from rank r. Throws grove::Error
  /// on every rank when any rank's send does not hold exactly size() elements.
  template <Transferable T>
  std::vector<T> alltoall(std::span<const T> send) const {
    std::optional<std::string> problem;
    if (send.size() != static_cast<std::size_t>(size()))
      problem = fmt::format("needs one element per rank ({}), got {}", size(), send.size());
    throwIfAnyFailed(problem, "Comm::alltoall");
    std::vector<T> out(send.size());
    countCollective(out.size() * sizeof(T));
    ++commTraffic().alltoalls;
    detail::alltoall(*handle_, send.data(), out.data(), sizeof(T));
    return out;
  }
  /// Collective: send holds the blocks for ranks 0, 1, ... back to back, send_counts[r] elements
  /// for rank r. Returns the received blocks in rank order; recv_counts_out (optional) gets their
  /// lengths. Throws grove::Error on every rank, before any message, when any rank's send_counts
  /// does not have size() entries or does not add up to send.size().
  template <Transferable T>
  std::vector<T> alltoallv(std::span<const T> send, std::span<const int> send_counts,
                           std::vector<int>* recv_counts_out = nullptr) const {
    std::vector<T> out;
    alltoallvInto(send, send_counts, out, recv_counts_out);
    return out;
  }
  /// alltoallv() into `out`, resized to what arrives: its memory is kept, so an exchange repeated
  /// every step with a kept vector neither allocates nor touches fresh pages again. `out` must not
  /// share storage with `send`.
  template <Transferable T>
  void alltoallvInto(std::span<const T> send, std::span<const int> send_counts, std::vector<T>& out,
                     std::vector<int>* recv_counts_out = nullptr) const {
    // Checked on every rank before any message, so a bad call stops all ranks, none hangs.
    std::optional<std::string> problem;
    long long sent = 0;
    for (int c : send_counts) sent += c;
    if (send_counts.size() != static_cast<std::size_t>(size()))
      problem = fmt::format("needs one send count per rank ({}), got {}", size(), send_counts.size());
    else if (sent != static_cast<long long>(send.size()))
      problem = fmt::format("send counts add up to {} but {} elements were given", sent, send.size());
    throwIfAnyFailed(problem, "Comm::alltoallv");
    const std::vector<int> recv_counts = alltoall(send_counts);
    const std::vector<int> send_displacements = exclusiveScan({send_counts.begin(), send_counts.end()});
    const std::vector<int> recv_displacements = exclusiveScan(recv_counts);
    out.resize(static_cast<std::size_t>(recv_displacements.back() + recv_counts.back()));
    countCollective(out.size() * sizeof(T));
    ++commTraffic().alltoalls;
    detail::alltoallv(*handle_, send.data(), send_counts.data(), send_displacements.data(), out.data(),
                      recv_counts.data(), recv_displacements.data(), sizeof(T));
    if (recv_counts_out) *recv_counts_out = recv_counts;
  }

  /// allgatherv() for a std::vector argument (a span parameter does not deduce from one).
  template <Transferable T>
  std::vector<T> allgatherv(const std::vector<T>& mine, std::vector<int>* counts_out = nullptr) const {
    return allgatherv(std::span<const T>(mine), counts_out);
  }
  /// gatherv() for a std::vector argument.
  template <Transferable T>
  std::vector<T> gatherv(const std::vector<T>& mine, int root = 0, std::vector<int>* counts_out = nullptr) const {
    return gatherv(std::span<const T>(mine), root, counts_out);
  }
  /// alltoall() for a std::vector argument.
  template <Transferable T>
  std::vector<T> alltoall(const std::vector<T>& send) const {
    return alltoall(std::span<const T>(send));
  }
  /// alltoallv() for std::vector arguments.
  template <Transferable T>
  std::vector<T> alltoallv(const std::vector<T>& send, const std::vector<int>& send_counts,
                           std::vector<int>* recv_counts_out = nullptr) const {
    return alltoallv(std::span<const T>(send), std::span<const int>(send_counts), recv_counts_out);
  }

  /// Collective. When one rank finds bad input inside a collective stage, every rank must leave
  /// the stage together, or the others wait forever in the next message: if any rank passes a
  /// problem, every rank throws grove::Error (the finders with their own messages, the others
  /// naming the lowest finder); returns when none does.
  void throwIfAnyFailed(const std::optional<std::string>& my_problem, std::string_view stage) const {
    const int no_failure = size();
    const int first = allreduceMin(my_problem ? rank() : no_failure);
    if (first == no_failure) return;
    if (my_problem) throw Error(stage, *my_problem);
    throw Error(stage, fmt::format("stopped because rank {} found bad input (its message names it); nothing was "
                                   "changed here",
                                   first));
  }

  // ---- sparse exchange -------------------------------------------------------------------------
  /// Collective. Sends each message's value to its rank (any rank, this one included; at most one
  /// message per destination is the usual use, several are allowed) and returns the messages that
  /// reach this rank, sorted by source rank (then in the order each source listed them).
  /// Nothing is learnt about ranks that send this rank nothing: the cost is the messages plus one
  /// nonblocking barrier, O(destinations + log P), where counts through alltoall cost O(P).
  /// Throws grove::Error (this rank alone) for a destination outside [0, size()).
  template <Transferable T>
  std::vector<SparseMessage<T>> exchangeSparse(std::span<const SparseMessage<T>> to) const {
    std::vector<int> dests(to.size());
    std::vector<T> values(to.size());
    for (std::size_t k = 0; k < to.size(); ++k) {
      require(to[k].rank >= 0 && to[k].rank < size(), "Comm::exchangeSparse", "destination rank {} is outside [0, {})",
              to[k].rank, size());
      dests[k] = to[k].rank;
      values[k] = to[k].value;
    }
    std::vector<int> sources;
    std::vector<unsigned char> bytes;
    detail::sparseExchange(*handle_, dests.data(), values.data(), checkedCount(to.size()), sizeof(T), &sources, &bytes);
    std::vector<SparseMessage<T>> from(sources.size());
    for (std::size_t k = 0; k < sources.size(); ++k) {
      from[k].rank = sources[k];
      std::memcpy(&from[k].value, bytes.data() + k * sizeof(T), sizeof(T));
    }
    // A source's messages arrive in its order (MPI does not overtake), so a stable sort keeps it.
    std::stable_sort(from.begin(), from.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    CommTraffic& t = commTraffic();
    t.messages_sent += static_cast<std::int64_t>(to.size());
    t.bytes_sent += static_cast<std::int64_t>(to.size() * sizeof(T));
    t.messages_received += static_cast<std::int64_t>(from.size());
    t.bytes_received += static_cast<std::int64_t>(from.size() * sizeof(T));
    countCollective(0);  // the nonblocking barrier
    return from;
  }
  /// exchangeSparse() for a std::vector argument.
  template <Transferable T>
  std::vector<SparseMessage<T>> exchangeSparse(const std::vector<SparseMessage<T>>& to) const {
    return exchangeSparse(std::span<const SparseMessage<T>>(to));
  }

  /// Collective: the ranks of this communicator that share this process's node (shared memory),
  /// ordered as here. Device transports use it to find the peers they can reach without MPI.
  Comm sharedMemory() const { return Comm(detail::sharedMemoryComm(*handle_)); }

  // ---- point-to-point (nonblocking) -------------------------------------------------------------
  /// Starts sending data to rank dest with tag; the returned Request must be waited for (or
  /// destroyed) before data is changed or freed. Counted in commTraffic().
  template <class E>
    requires Transferable<std::remove_const_t<E>>
  [[nodiscard]] Request isend(std::span<E> data, int dest, int tag) const {
    ++commTraffic().messages_sent;
    commTraffic().bytes_sent += static_cast<std::int64_t>(data.size_bytes());
    return Request(detail::isend(*handle_, data.data(), checkedCount(data.size()), sizeof(E), dest, tag));
  }
  /// Starts receiving up to data.size() elements from rank source with tag into data; valid once
  /// the returned Request has been waited for.
  template <Transferable T>
  [[nodiscard]] Request irecv(std::span<T> data, int source, int tag) const {
    ++commTraffic().messages_received;
    commTraffic().bytes_received += static_cast<std::int64_t>(data.size_bytes());
    return Request(detail::irecv(*handle_, data.data(), checkedCount(data.size()), sizeof(T), source, tag));
  }

  /// The backend's communicator (for grove's own layers, such as SharedFile).
  const detail::CommHandle& handle() const { return *handle_; }

 private:
  explicit Comm(detail::CommPtr handle) : handle_(std::move(handle)) {}

  template <class T>
  T allreduceOne(const T& value, detail::ReduceOp op) const {
    T out{};
    using Layout = ReductionLayout<T>;
    countCollective(sizeof(T));
    detail::allreduce(*handle_, &value, &out, Layout::count,
                      detail::scalarKindOf<typename Layout::Scalar>(), op);
    return out;
  }
  template <class T>
  void allreduceInPlace(std::span<T> values, detail::ReduceOp op) const {
    using Layout = ReductionLayout<T>;
    std::vector<T> in(values.begin(), values.end());
    countCollective(values.size_bytes());
    detail::allreduce(*handle_, in.data(), values.data(), values.size() * Layout::count,
                      detail::scalarKindOf<typename Layout::Scalar>(), op);
  }

  static void countCollective(std::size_t result_bytes) {
    ++commTraffic().collectives;
    commTraffic().collective_bytes += static_cast<std::int64_t>(result_bytes);
  }

  static int checkedCount(std::size_t n) {
    require(n <= static_cast<std::size_t>(INT_MAX), "Comm", "message of {} elements exceeds the {} an MPI count holds",
            n, INT_MAX);
    return static_cast<int>(n);
  }
  static std::vector<int> exclusiveScan(const std::vector<int>& counts) {
    std::vector<int> displacements(counts.size(), 0);
    long long total = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      displacements[i] = static_cast<int>(total);
      total += counts[i];
    }
    checkedCount(static_cast<std::size_t>(total));
    return displacements;
  }

  detail::CommPtr handle_;
};

/// Whether the MPI library reads and writes device memory itself (CUDA-aware MPI), as it reports at
/// run time; false in the serial build and where the library cannot say.
inline bool mpiIsCudaAware() noexcept { return detail::mpiIsCudaAware(); }

}  // namespace grove
