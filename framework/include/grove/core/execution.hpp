#pragma once
/// @file
/// Execution policies: where a stage function runs. Stage functions over arrays take a policy as
/// their first argument (cornerstone-octree's style),
///
///     grove::linkCells(grove::Cpu{}, keys, ...);           OpenMP threads on the host
///     grove::linkCells(grove::Gpu{stream}, keys, ...);     kernels on `stream`, device arrays
///
/// and where the algorithm is the same the loop body is written once, as a GROVE_HOST_DEVICE
/// function, and called by the OpenMP loop and by the kernel alike: the CPU path stays the
/// reference that the GPU tests compare with, bit for bit where the arithmetic allows.
///
/// No CUDA header here: a host translation unit may name grove::Gpu (the stream is CUDA's own
/// opaque CUstream_st*, the type cudaStream_t aliases), and only .cu files launch work with it.
#include <concepts>

/// @def GROVE_HOST_DEVICE
/// Marks functions that device code calls too: nvcc compiles them for both sides, a host
/// compiler sees plain inline functions. User types that the GPU-resident pipeline reads on the
/// device (FP, EPI, EPJ, Force, moments: getPos, copyFromFP, getCharge, copyFromForce, clear,
/// the moment contract) mark their members with it.
#if defined(__CUDACC__)
#define GROVE_HOST_DEVICE __host__ __device__
#else
#define GROVE_HOST_DEVICE
#endif

/// Host-device templates that call user members: the separate name marks the functions whose
/// device use depends on the user's types. A host-only user type stays usable from host code
/// compiled by the host compiler; in a file compiled by nvcc, nvcc warns (#20014-D) when such a
/// template is instantiated with a host-only member, so a type used there marks the members
/// grove calls (getPos, ...) GROVE_HOST_DEVICE.
#define GROVE_HD_TEMPLATE GROVE_HOST_DEVICE

struct CUstream_st;

namespace grove {

/// The host: OpenMP threads over host arrays.
struct Cpu {};

/// One CUDA device (the calling thread's current one): kernels and CUB calls enqueued on `stream`
/// (null: the legacy default stream), over device arrays. Stage functions do not synchronise
/// unless their result is a host value; callers order stages through the stream.
struct Gpu {
  CUstream_st* stream = nullptr;  ///< the CUDA stream (a cudaStream_t); null: the legacy default stream
};

/// grove::Cpu or grove::Gpu.
template <class P>
concept ExecutionPolicy = std::same_as<P, Cpu> || std::same_as<P, Gpu>;

/// A policy whose arrays live in device memory (grove::Gpu).
template <class P>
concept DevicePolicy = std::same_as<P, Gpu>;

}  // namespace grove
