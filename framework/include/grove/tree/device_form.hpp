#pragma once
/// @file
/// How a host particle type travels to the device in grove's multiwalk engine and the resident
/// trees. Host-only (no CUDA header); the image types are plain structs that device code reads
/// too. doc/gpu_resident.md ("Device types") shows a quadrupole interaction over them.
#include <type_traits>

#include "grove/tree/moments.hpp"

namespace grove::gpu {

/// DeviceForm<T>::type is what the engine stores on the device for a T, and make() converts one
/// on the host while packing (on the device in the resident trees). The default is T itself,
/// copied byte for byte. Specialise it to send a smaller or better aligned image (floats instead
/// of doubles, a 16-byte multiple so that each element is one 16-byte load); the device
/// interaction then receives the image type. Needs: T trivially copyable.
template <class T>
struct DeviceForm {
  static_assert(std::is_trivially_copyable_v<T>, "a type sent to the device must be trivially copyable");
  using type = T;  ///< what the device stores and the interaction receives
  /// The device image of t (here t itself).
  GROVE_HD_TEMPLATE static const T& make(const T& t) { return t; }
};

/// What the device stores for a T: DeviceForm<T>::type.
template <class T>
using DeviceFormOf = typename DeviceForm<T>::type;

/// The device image of grove::SPJMonopole: a double-precision superparticle as 16-byte-aligned
/// floats, what a monopole cell interaction receives.
struct alignas(16) DeviceMonopole {
  float x;     ///< centre of mass, x
  float y;     ///< centre of mass, y
  float z;     ///< centre of mass, z
  float mass;  ///< total mass (charge) of the cell
};

/// The device image of grove::SPJQuadrupole: the centre of mass, the mass and the traceless
/// second moment T = 3 Q - tr(Q) I about the centre of mass c, where Q = sum m (x - c)(x - c)^T
/// is grove::SPJQuadrupole's (raw) quad, and tr(Q). T is formed in double and then rounded, so its
/// trace is zero to float rounding; all six components are kept (zz too), so that a kernel need
/// not form it. With d = x - c and R^2 = d^2 + eps^2 (Plummer softening), the raw form's
/// phi = -M/R - 1.5 d.Q.d / R^5 + 0.5 tr(Q) / R^3 (the Taylor expansion of the softened
/// potential) is phi = -M/R - 0.5 (d.T.d - eps^2 tr(Q)) / R^5: tr(Q) is needed only with
/// softening (the softened potential is not harmonic), as one fused multiply-add.
/// 48 bytes: three 16-byte loads (x, y, z, mass | xx, yy, zz, xy | xz, yz, trace, pad).
struct alignas(16) DeviceQuadrupole {
  float x;      ///< centre of mass, x
  float y;      ///< centre of mass, y
  float z;      ///< centre of mass, z
  float mass;   ///< total mass (charge)
  float xx;     ///< T_xx = 3 Q_xx - tr Q
  float yy;     ///< T_yy = 3 Q_yy - tr Q
  float zz;     ///< T_zz = 3 Q_zz - tr Q (= -T_xx - T_yy up to rounding)
  float xy;     ///< T_xy = 3 Q_xy = T_yx
  float xz;     ///< T_xz = 3 Q_xz = T_zx
  float yz;     ///< T_yz = 3 Q_yz = T_zy
  float trace;  ///< tr Q = Q_xx + Q_yy + Q_zz (of the raw moment; for the softening term)
  float pad;    ///< unused: the 16-byte multiple
};

/// grove::SPJMonopole travels as DeviceMonopole.
template <>
struct DeviceForm<SPJMonopole> {
  using type = DeviceMonopole;  ///< the image
  /// The image: each component rounded to float.
  GROVE_HOST_DEVICE static DeviceMonopole make(const SPJMonopole& s) {
    return {static_cast<float>(s.pos.x), static_cast<float>(s.pos.y), static_cast<float>(s.pos.z),
            static_cast<float>(s.mass)};
  }
};

/// grove::SPJQuadrupole travels as DeviceQuadrupole.
template <>
struct DeviceForm<SPJQuadrupole> {
  using type = DeviceQuadrupole;  ///< the image
  /// The image: the traceless T = 3 Q - tr(Q) I and tr(Q) formed in double, then each component
  /// rounded to float.
  GROVE_HOST_DEVICE static DeviceQuadrupole make(const SPJQuadrupole& s) {
    DeviceQuadrupole d{};
    d.x = static_cast<float>(s.pos.x), d.y = static_cast<float>(s.pos.y), d.z = static_cast<float>(s.pos.z);
    d.mass = static_cast<float>(s.mass);
    const SymMat3d& q = s.quad;
    const double trace = q.xx + q.yy + q.zz;
    d.xx = static_cast<float>(3.0 * q.xx - trace), d.yy = static_cast<float>(3.0 * q.yy - trace);
    d.zz = static_cast<float>(3.0 * q.zz - trace);
    d.xy = static_cast<float>(3.0 * q.xy), d.xz = static_cast<float>(3.0 * q.xz), d.yz = static_cast<float>(3.0 * q.yz);
    d.trace = static_cast<float>(trace);
    return d;
  }
};

}  // namespace grove::gpu
