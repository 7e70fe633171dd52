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

/// The device image of grove::SPJQuadrupole: the centre of mass, the mass, the raw second moment
/// Q = sum m (x - c)(x - c)^T about the centre of mass c (not traceless: grove::SPJQuadrupole's
/// quad) and its trace, computed from the float components as the CPU kernels do.
struct alignas(16) DeviceQuadrupole {
  float x;      ///< centre of mass, x
  float y;      ///< centre of mass, y
  float z;      ///< centre of mass, z
  float mass;   ///< total mass (charge)
  float xx;     ///< Q_xx = sum m dx dx
  float yy;     ///< Q_yy
  float zz;     ///< Q_zz
  float xy;     ///< Q_xy = Q_yx
  float xz;     ///< Q_xz = Q_zx
  float yz;     ///< Q_yz = Q_zy
  float trace;  ///< xx + yy + zz (of the float components)
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
  /// The image: each component rounded to float, the trace summed from the rounded diagonal.
  GROVE_HOST_DEVICE static DeviceQuadrupole make(const SPJQuadrupole& s) {
    DeviceQuadrupole d{};
    d.x = static_cast<float>(s.pos.x), d.y = static_cast<float>(s.pos.y), d.z = static_cast<float>(s.pos.z);
    d.mass = static_cast<float>(s.mass);
    d.xx = static_cast<float>(s.quad.xx), d.yy = static_cast<float>(s.quad.yy), d.zz = static_cast<float>(s.quad.zz);
    d.xy = static_cast<float>(s.quad.xy), d.xz = static_cast<float>(s.quad.xz), d.yz = static_cast<float>(s.quad.yz);
    d.trace = d.xx + d.yy + d.zz;
    return d;
  }
};

}  // namespace grove::gpu
