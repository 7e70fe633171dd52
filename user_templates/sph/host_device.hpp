#pragma once
// SPH_HOST_DEVICE marks the sample's formulas that GPU code calls too (sph_physics.hpp,
// wendland_c2.hpp): nvcc compiles them for both sides, a host compiler sees plain inline
// functions. One source for the physics, so that the CPU and GPU paths cannot drift apart.
#if defined(__CUDACC__)
#define SPH_HOST_DEVICE __host__ __device__
#else
#define SPH_HOST_DEVICE
#endif
