#pragma once
// How a host particle type travels to the device in grove's multiwalk engine. Host-only (no
// CUDA header); the image types are plain structs that device code reads too.
#include <type_traits>

#include "grove/tree/moments.hpp"

namespace grove::gpu {

// DeviceForm<T>::type is what the engine stores on the device for a T, and make() converts one
// on the host while packing. The default is T itself, copied byte for byte. Specialise it to send
// a smaller or better aligned image (floats instead of doubles, a 16-byte multiple so that each
// element is one 16-byte load); the device interaction then receives the image type.
template <class T>
struct DeviceForm {
  static_assert(std::is_trivially_copyable_v<T>, "a type sent to the device must be trivially copyable");
  using type = T;
  GROVE_HD_TEMPLATE static const T& make(const T& t) { return t; }
};

template <class T>
using DeviceFormOf = typename DeviceForm<T>::type;

// grove's double-precision superparticles go to the device as 16-byte-aligned float images.
struct alignas(16) DeviceMonopole {
  float x, y, z, mass;
};

// Raw second moment Q about the centre of mass (grove::SPJQuadrupole's quad) and its trace,
// computed from the float components as the CPU kernels do.
struct alignas(16) DeviceQuadrupole {
  float x, y, z, mass;
  float xx, yy, zz, xy;
  float xz, yz, trace, pad;
};

template <>
struct DeviceForm<SPJMonopole> {
  using type = DeviceMonopole;
  GROVE_HOST_DEVICE static DeviceMonopole make(const SPJMonopole& s) {
    return {static_cast<float>(s.pos.x), static_cast<float>(s.pos.y), static_cast<float>(s.pos.z),
            static_cast<float>(s.mass)};
  }
};

template <>
struct DeviceForm<SPJQuadrupole> {
  using type = DeviceQuadrupole;
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
