// fmm_gpu_benchmark's engines (fmm_gpu_engine.h): the pairwise interactions, written once for the
// device, which grove's multiwalk engine tiles, packs and transfers, and which the FMM's device
// near field runs over the traversal's lists.
#include "fmm_gpu_engine.h"
#include "grove/fmm/device_near_field.cuh"
#include "grove/gpu/multiwalk/multiwalk_engine.cuh"
#include "grove/tree/device_form.hpp"

namespace fmm_comparison {

namespace {

// As NewtonKernel: r = 0 (a particle on itself) gives nothing.
struct NewtonEp {
  __device__ void operator()(const EP& i, const EP& j, Force& f) const {
    const double dx = j.pos.x - i.pos.x, dy = j.pos.y - i.pos.y, dz = j.pos.z - i.pos.z;
    const double r2 = dx * dx + dy * dy + dz * dz;
    const double r_inv = r2 > 0.0 ? rsqrt(r2) : 0.0;
    const double m_r_inv = j.mass * r_inv, m_r3_inv = m_r_inv * r_inv * r_inv;
    f.acc.x += m_r3_inv * dx;
    f.acc.y += m_r3_inv * dy;
    f.acc.z += m_r3_inv * dz;
    f.pot -= m_r_inv;
  }
};

// As QuadrupoleKernel, in double from the superparticle's float image (its traceless
// T = 3 Q - tr(Q) I; unsoftened, so tr Q is not needed): pot -M/r - 0.5 rTr/r^5,
// acc -(M/r^3 + 2.5 rTr/r^7) r + Tr/r^5.
struct NewtonQuadrupole {
  __device__ void operator()(const EP& i, const grove::gpu::DeviceQuadrupole& s, Force& f) const {
    const double rx = i.pos.x - s.x, ry = i.pos.y - s.y, rz = i.pos.z - s.z;
    const double r2 = rx * rx + ry * ry + rz * rz, r_inv = rsqrt(r2);
    const double r3 = r_inv * r_inv * r_inv, r5 = r3 * r_inv * r_inv, r7 = r5 * r_inv * r_inv;
    const double tx = s.xx * rx + s.xy * ry + s.xz * rz, ty = s.xy * rx + s.yy * ry + s.yz * rz,
                 tz = s.xz * rx + s.yz * ry + s.zz * rz;
    const double rtr = rx * tx + ry * ty + rz * tz, m = s.mass;
    f.pot += -m * r_inv - 0.5 * rtr * r5;
    const double radial = -m * r3 - 2.5 * rtr * r7;
    f.acc.x += radial * rx + r5 * tx;
    f.acc.y += radial * ry + r5 * ty;
    f.acc.z += radial * rz + r5 * tz;
  }
};

}  // namespace

std::unique_ptr<NewtonMultiwalk> makeNewtonEngine() {
  return std::make_unique<grove::gpu::MultiwalkEngine<EP, EP, grove::SPJQuadrupole, Force, NewtonEp, NewtonQuadrupole>>(
      NewtonEp{}, NewtonQuadrupole{});
}

std::unique_ptr<NewtonNearField> makeNewtonNearField(std::shared_ptr<grove::fmm::DeviceFarField> far_field,
                                                     long long particles_per_task) {
  return grove::fmm::makeDeviceNearField<Force, EP, EP>(std::move(far_field), NewtonEp{}, particles_per_task);
}

}  // namespace fmm_comparison
