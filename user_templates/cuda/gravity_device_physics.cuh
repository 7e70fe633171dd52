#pragma once
// User template: the softened gravity of ../gravity_kernels.hpp (Plummer softening, G = 1), one
// source at a time, for device code. The hand-written multiwalk kernel (gravity_multiwalk.cuh)
// and the engine's interaction functors (gravity_interactions.cuh) both call these, so the GPU
// physics is written once. The monopole's operation order is the CPU kernels' order; the one
// difference is rsqrtNormal (a hardware approximation, within 2 ulp) for 1/sqrt: per-particle forces
// then agree with the CPU kernels to about 1e-7 relative. The quadrupole is the traceless form of
// the same expansion (DeviceQuadrupole), which agrees with the CPU kernel to float rounding.
#include "grove/tree/device_form.hpp"

namespace user::cuda {

// 1/sqrt(x) as the single hardware approximation (MUFU.RSQ, within 2 ulp). rsqrtf compiles to
// the PTX rsqrt.approx.f32, which unless the file is built with -ftz=true wraps that instruction
// in a fix-up for subnormal inputs: a compare and two predicated multiplies, about a fifth of the
// instructions of an interaction. Here x = r^2 + eps^2 >= eps^2 is never subnormal, so the
// flush-to-zero form (rsqrt.approx.ftz.f32) gives the same value without the fix-up.
__device__ __forceinline__ float rsqrtNormal(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// acc += m (x_j - x_i) / r^3, pot -= m / r, with r^2 = |x_j - x_i|^2 + eps2. A source on top of
// the target (r = 0) adds -m/eps to the potential and nothing to the acceleration, as on the CPU.
__device__ __forceinline__ void addMonopole(float xi, float yi, float zi, float xj, float yj, float zj, float mj,
                                            float eps2, float& ax, float& ay, float& az, float& pot) {
  const float dx = xj - xi, dy = yj - yi, dz = zj - zi;
  const float r2 = eps2 + dx * dx + dy * dy + dz * dz;  // eps2 first: three fused multiply-adds
  const float r_inv = rsqrtNormal(r2);
  const float mr_inv = mj * r_inv;
  const float mr3_inv = mr_inv * r_inv * r_inv;
  ax += mr3_inv * dx, ay += mr3_inv * dy, az += mr3_inv * dz;
  pot -= mr_inv;
}

// A quadrupole superparticle (grove::gpu::DeviceQuadrupole: the traceless T = 3 Q - tr(Q) I about
// its centre of mass, and tr Q), with d pointing from the source to the target as in
// GravityQuadrupoleKernel and R^2 = d^2 + eps2:
//   phi = -M/R - 0.5 q/R^5,   a = -grad phi = -(M/R^3 + 2.5 q/R^7) d + Td/R^5,
// with q = dTd - eps2 tr Q. This is the CPU kernel's raw form (-M/R - 1.5 dQd/R^5 + 0.5 trQ/R^3,
// the Taylor expansion of the softened potential) rewritten, in 35 floating-point instructions
// instead of 47 (PTX, sm_90): the trace enters once (the softening term), the mass and
// quadrupole terms share one radial factor, and each accumulation is a fused multiply-add (fmaf:
// a - b * c is not always contracted). The two agree to float rounding.
__device__ __forceinline__ void addQuadrupole(float xi, float yi, float zi, const grove::gpu::DeviceQuadrupole& s,
                                              float eps2, float& ax, float& ay, float& az, float& pot) {
  const float dx = xi - s.x, dy = yi - s.y, dz = zi - s.z;
  const float r2 = eps2 + dx * dx + dy * dy + dz * dz;  // eps2 first: three fused multiply-adds
  const float r_inv = rsqrtNormal(r2);
  const float r2_inv = r_inv * r_inv;
  const float r5_inv = r2_inv * r2_inv * r_inv;
  const float tx = s.xx * dx + s.xy * dy + s.xz * dz;
  const float ty = s.xy * dx + s.yy * dy + s.yz * dz;
  const float tz = s.xz * dx + s.yz * dy + s.zz * dz;
  const float q = fmaf(-eps2, s.trace, tx * dx + ty * dy + tz * dz);  // dTd - eps2 trQ
  const float q_r5 = q * r5_inv;
  const float m_r = s.mass * r_inv;
  pot = fmaf(-0.5f, q_r5, pot - m_r);
  const float radial = fmaf(-2.5f, q_r5, -m_r) * r2_inv;  // -(M/R^3 + 2.5 q/R^7)
  ax = fmaf(radial, dx, fmaf(tx, r5_inv, ax));
  ay = fmaf(radial, dy, fmaf(ty, r5_inv, ay));
  az = fmaf(radial, dz, fmaf(tz, r5_inv, az));
}

}  // namespace user::cuda
