// Tutorial 04: the GPU side. The gravity kernel, and the dispatch/retrieve pair through which
// grove's tree hands it the interaction lists (FDPS's index form, "indirect addressing"):
//   - once per step, dispatch receives the tree's whole EPJ and superparticle arrays; they go to
//     the device once, and every walk of the step reads them there;
//   - then each dispatch brings a batch of walks: the i-particles and, per walk, two lists of
//     indices into those arrays. Indices are 4 bytes where a copied EPJ is 16, and a particle
//     sits in the lists of many walks;
//   - on REUSE_LIST steps grove says the lists are unchanged: the copies kept on the device are
//     used again and only the i-particles cross the bus.
// A batch runs on its tag's stream, so that up to tag_max batches are in flight: grove packs the
// next batch and writes finished forces back while the device computes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "grove/gpu/cuda_resources.hpp"  // grove::gpu::check, device/pinned arrays, streams, events
#include "kernel.hpp"

namespace {

using grove::gpu::check;

// The tree's EPJ array goes to the device as it is and is read there as float4 (x, y, z, mass).
static_assert(std::is_standard_layout_v<EPJGrav> && std::is_trivially_copyable_v<EPJGrav>);
static_assert(sizeof(EPJGrav) == sizeof(float4) && offsetof(EPJGrav, pos) == 0 &&
                  offsetof(EPJGrav, mass) == 3 * sizeof(float),
              "kernel.cu reads EPJGrav as a float4 (x, y, z, mass): keep that layout or convert it here");

constexpr int kThreads = 64;  // i-particles per block; sources go through shared memory in tiles of as many

// Where one walk's data sit in its batch's arrays: i-particles and forces from i_begin, its EPJ
// indices from j_begin in the EPJ index list, its superparticle indices from s_begin in theirs.
struct Walk {
  int i_begin, n_i, j_begin, n_j, s_begin, n_s;
};

// One source on one i-particle: softened gravity, the acceleration and the potential (the same
// formula for a particle and a superparticle's monopole).
__device__ inline void pull(const float4 xi, const float4 s, const float eps2, float4& f) {
  const float dx = s.x - xi.x, dy = s.y - xi.y, dz = s.z - xi.z;
  const float r_inv = rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
  const float m_r = s.w * r_inv, m_r3 = m_r * r_inv * r_inv;
  f.x += m_r3 * dx, f.y += m_r3 * dy, f.z += m_r3 * dz, f.w -= m_r;
}

// The n sources source[ids[0..n)] on this thread's i-particle. The block loads a tile of them
// (one per thread, through the index: the indirect addressing) into shared memory, then every
// thread reads the whole tile. n is the same for the whole block, so all threads reach both
// barriers.
__device__ void pullAll(const float4* __restrict__ source, const int* __restrict__ ids, const int n, const float4 xi,
                        const float eps2, float4* tile, float4& f) {
  for (int base = 0; base < n; base += kThreads) {
    if (base + threadIdx.x < n) tile[threadIdx.x] = source[ids[base + threadIdx.x]];
    __syncthreads();
    const int in_tile = min(kThreads, n - base);
    for (int q = 0; q < in_tile; ++q) pull(xi, tile[q], eps2, f);
    __syncthreads();  // before the next tile overwrites this one
  }
}

// Block (x, y): walk y, its i-particles x * kThreads ... x * kThreads + kThreads - 1.
// epi and force are the batch's (walk after walk); epj and spj the step's whole arrays;
// id_epj and id_spj the batch's index lists (walk after walk).
__global__ void __launch_bounds__(kThreads)
    gravityKernel(const Walk* __restrict__ walks, const float4* __restrict__ epi, const float4* __restrict__ epj,
                  const int* __restrict__ id_epj, const float4* __restrict__ spj, const int* __restrict__ id_spj,
                  const float eps2, float4* __restrict__ force) {
  __shared__ float4 tile[kThreads];
  const Walk w = walks[blockIdx.y];
  const int first = blockIdx.x * kThreads;
  if (first >= w.n_i) return;  // a smaller walk than the batch's largest: the whole block leaves
  const int i = first + threadIdx.x;
  const bool mine = i < w.n_i;  // the others still load tiles for the block
  const float4 xi = mine ? epi[w.i_begin + i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float4 f = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  pullAll(epj, id_epj + w.j_begin, w.n_j, xi, eps2, tile, f);
  pullAll(spj, id_spj + w.s_begin, w.n_s, xi, eps2, tile, f);
  if (mine) force[w.i_begin + i] = f;
}

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error("tutorial 04 gravity GPU: " + message); }

// The state of one rank's GPU between calls.
struct GravityGpu {
  float eps2;
  // The step's whole arrays, sent once per step on their own stream; batches wait for `sent`.
  grove::gpu::Stream upload;
  grove::gpu::Event sent;
  grove::gpu::DeviceArray<float4> epj, spj;
  grove::gpu::PinnedArray<float4> spj_staging;  // superparticles are doubles: converted here first
  bool arrays_sent = false;

  // One per tag: its stream, and the buffers of the batch in flight on it. The pinned ones must
  // stay untouched until the batch's copies are done, i.e. until its retrieve.
  struct Slot {
    grove::gpu::Stream stream;
    grove::gpu::PinnedArray<Walk> walks;
    grove::gpu::PinnedArray<float4> epi, force;
    grove::gpu::PinnedArray<int> ids;
    grove::gpu::DeviceArray<Walk> d_walks;
    grove::gpu::DeviceArray<float4> d_epi, d_force;
    int n_walk = 0, n_i = 0;
    bool in_flight = false;
  };
  std::vector<std::unique_ptr<Slot>> slots;

  // The index lists of each call of a step (call k of a REUSE_LIST step has the lists of call k
  // of the MAKE_LIST_FOR_REUSE step), kept on the device: EPJ indices, then superparticle ones.
  struct KeptLists {
    grove::gpu::DeviceArray<int> ids;
    std::vector<int> n_epj, n_spj;  // per walk: to check that a reuse call matches
    bool matches(int n_walk, const int* nj, const int* ns) const {
      if (static_cast<int>(n_epj.size()) != n_walk) return false;
      for (int w = 0; w < n_walk; ++w)
        if (n_epj[w] != nj[w] || n_spj[w] != ns[w]) return false;
      return true;
    }
  };
  std::vector<KeptLists> kept;
  int call_in_step = 0;

  GravityGpuCounts counts;

  explicit GravityGpu(float eps2_) : eps2(eps2_) {}
  ~GravityGpu() {  // copies into pinned buffers may still run: wait before freeing them (no throw here)
    cudaStreamSynchronize(upload.get());
    for (auto& s : slots) cudaStreamSynchronize(s->stream.get());
  }

  Slot& slot(int tag) {
    if (tag < 0) fail("negative tag " + std::to_string(tag));
    while (static_cast<int>(slots.size()) <= tag) slots.push_back(std::make_unique<Slot>());
    return *slots[static_cast<std::size_t>(tag)];
  }

  // The step's whole arrays. grove sends them first in each step, after every batch of the step
  // before was retrieved, so no kernel reads the device arrays now; the last upload may still run
  // (a rank with no walks never waits for it), hence the wait before the staging buffer is reused.
  // The tree's EPJ array is ordinary (pageable) memory: cudaMemcpyAsync has staged it by the time
  // it returns, so grove may change it afterwards.
  void sendArrays(const EPJGrav* epj_host, int n_epj, const grove::SPJMonopole* spj_host, int n_spj) {
    upload.synchronize();
    epj.reserve(static_cast<std::size_t>(n_epj));
    spj.reserve(static_cast<std::size_t>(n_spj));
    spj_staging.reserve(static_cast<std::size_t>(n_spj));
    if (n_epj > 0)
      check(cudaMemcpyAsync(epj.data(), epj_host, sizeof(EPJGrav) * static_cast<std::size_t>(n_epj),
                            cudaMemcpyHostToDevice, upload.get()),
            "cudaMemcpyAsync (EPJ array)");
    for (int k = 0; k < n_spj; ++k) {
      const grove::SPJMonopole& s = spj_host[k];
      spj_staging[static_cast<std::size_t>(k)] = make_float4(static_cast<float>(s.pos.x), static_cast<float>(s.pos.y),
                                                             static_cast<float>(s.pos.z), static_cast<float>(s.mass));
    }
    grove::gpu::copyToDeviceAsync(spj.data(), spj_staging.data(), static_cast<std::size_t>(n_spj), upload);
    sent.record(upload.get());
    arrays_sent = true;
    call_in_step = 0;
  }

  void dispatch(int tag, int n_walk, const EPIGrav** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                const int** id_spj, const int* n_spj, bool lists_unchanged) {
    if (!arrays_sent) fail("a batch before the step's EPJ/SPJ arrays were sent");
    if (n_walk > 65535) fail("more walks in one batch than a grid's y dimension holds: lower n_walk_limit");
    Slot& s = slot(tag);
    if (s.in_flight) fail("tag " + std::to_string(tag) + " dispatched again before its retrieve");

    // The walk table: each walk's offsets, a running sum of the counts.
    s.walks.reserve(static_cast<std::size_t>(n_walk));
    int n_i = 0, n_j = 0, n_s = 0, largest = 0;
    for (int w = 0; w < n_walk; ++w) {
      s.walks[static_cast<std::size_t>(w)] = {n_i, n_epi[w], n_j, n_epj[w], n_s, n_spj[w]};
      n_i += n_epi[w], n_j += n_epj[w], n_s += n_spj[w];
      largest = std::max(largest, n_epi[w]);
      counts.interactions += static_cast<long long>(n_epi[w]) * (n_epj[w] + n_spj[w]);
    }
    // The i-particles, walk after walk, as float4 (the kernel reads 16-byte loads).
    s.epi.reserve(static_cast<std::size_t>(n_i));
    for (int w = 0; w < n_walk; ++w)
      for (int i = 0; i < n_epi[w]; ++i) {
        const grove::Vec3f p = epi[w][i].pos;
        s.epi[static_cast<std::size_t>(s.walks[w].i_begin + i)] = make_float4(p.x, p.y, p.z, 0.0f);
      }

    // This call's index lists: kept from the last MAKE_LIST_FOR_REUSE step, or packed and sent.
    // (A slot's earlier batch was retrieved, and a kept list is read only by this call number's
    // batch, whose last use ended with the previous step: growing either frees nothing in use.)
    const int call = call_in_step++;
    if (static_cast<int>(kept.size()) <= call) kept.resize(static_cast<std::size_t>(call) + 1);
    KeptLists& lists = kept[static_cast<std::size_t>(call)];
    if (lists_unchanged && lists.matches(n_walk, n_epj, n_spj)) {
      ++counts.lists_reused;
    } else {
      s.ids.reserve(static_cast<std::size_t>(n_j + n_s));
      for (int w = 0; w < n_walk; ++w) {
        const Walk& r = s.walks[static_cast<std::size_t>(w)];
        for (int k = 0; k < r.n_j; ++k) s.ids[static_cast<std::size_t>(r.j_begin + k)] = id_epj[w][k];
        for (int k = 0; k < r.n_s; ++k) s.ids[static_cast<std::size_t>(n_j + r.s_begin + k)] = id_spj[w][k];
      }
      lists.ids.reserve(static_cast<std::size_t>(n_j + n_s));
      grove::gpu::copyToDeviceAsync(lists.ids.data(), s.ids.data(), static_cast<std::size_t>(n_j + n_s), s.stream);
      lists.n_epj.assign(n_epj, n_epj + n_walk);
      lists.n_spj.assign(n_spj, n_spj + n_walk);
      ++counts.lists_sent;
    }

    // Copies, kernel and the copy back, in order on the tag's stream; the kernel also waits for
    // the whole arrays (on the upload stream).
    s.d_walks.reserve(static_cast<std::size_t>(n_walk));
    s.d_epi.reserve(static_cast<std::size_t>(n_i));
    s.d_force.reserve(static_cast<std::size_t>(n_i));
    s.force.reserve(static_cast<std::size_t>(n_i));
    grove::gpu::copyToDeviceAsync(s.d_walks.data(), s.walks.data(), static_cast<std::size_t>(n_walk), s.stream);
    grove::gpu::copyToDeviceAsync(s.d_epi.data(), s.epi.data(), static_cast<std::size_t>(n_i), s.stream);
    s.stream.waitFor(sent.get());
    if (largest > 0) {
      const dim3 blocks(static_cast<unsigned>((largest + kThreads - 1) / kThreads), static_cast<unsigned>(n_walk));
      gravityKernel<<<blocks, kThreads, 0, s.stream.get()>>>(s.d_walks.data(), s.d_epi.data(), epj.data(),
                                                              lists.ids.data(), spj.data(), lists.ids.data() + n_j,
                                                              eps2, s.d_force.data());
      check(cudaGetLastError(), "gravityKernel launch");
      check(cudaMemcpyAsync(s.force.data(), s.d_force.data(), sizeof(float4) * static_cast<std::size_t>(n_i),
                            cudaMemcpyDeviceToHost, s.stream.get()),
            "cudaMemcpyAsync (forces)");
    }
    s.n_walk = n_walk, s.n_i = n_i, s.in_flight = true;
    ++counts.batches;
    counts.walks += n_walk;
  }

  void retrieve(int tag, int n_walk, const int* n_epi, ForceGrav** force) {
    Slot& s = slot(tag);
    if (!s.in_flight) fail("retrieve(tag " + std::to_string(tag) + ") without a dispatch");
    if (n_walk != s.n_walk)
      fail("retrieve(tag " + std::to_string(tag) + ") of " + std::to_string(n_walk) + " walks; " +
           std::to_string(s.n_walk) + " were dispatched");
    s.stream.synchronize();  // the kernel and the copy back are done (and any error shows here)
    s.in_flight = false;
    for (int w = 0; w < n_walk; ++w) {
      const Walk& r = s.walks[static_cast<std::size_t>(w)];
      if (n_epi[w] != r.n_i) fail("retrieve: walk " + std::to_string(w) + " has another size than dispatched");
      for (int i = 0; i < r.n_i; ++i) {  // ADD: grove's (and FDPS's) retrieve contract
        const float4 f = s.force[static_cast<std::size_t>(r.i_begin + i)];
        force[w][i].acc.x += f.x, force[w][i].acc.y += f.y, force[w][i].acc.z += f.z;
        force[w][i].pot += f.w;
      }
    }
  }
};

std::unique_ptr<GravityGpu> gpu;

GravityGpu& state() {
  if (!gpu) fail("call initializeGravityGpu first");
  return *gpu;
}

}  // namespace

void initializeGravityGpu(float eps2) { gpu = std::make_unique<GravityGpu>(eps2); }
void finalizeGravityGpu() { gpu.reset(); }

int dispatchGravity(int tag, int n_walk, const EPIGrav** epi, const int* n_epi, const int** id_epj,
                    const int* n_epj, const int** id_spj, const int* n_spj, const EPJGrav* epj, int n_epj_total,
                    const grove::SPJMonopole* spj, int n_spj_total, bool send_flag, bool lists_unchanged) {
  GravityGpu& g = state();
  if (send_flag) g.sendArrays(epj, n_epj_total, spj, n_spj_total);
  // grove's send call has no walks and expects no retrieve (FDPS's order: send, then the
  // batches); a send call from another caller that brings walks is a batch as well.
  if (!send_flag || n_walk > 0) g.dispatch(tag, n_walk, epi, n_epi, id_epj, n_epj, id_spj, n_spj, lists_unchanged);
  return 0;
}

int retrieveGravity(int tag, int n_walk, const int* n_epi, ForceGrav** force) {
  state().retrieve(tag, n_walk, n_epi, force);
  return 0;
}

GravityGpuCounts gravityGpuCounts() { return state().counts; }
void resetGravityGpuCounts() { state().counts = {}; }
