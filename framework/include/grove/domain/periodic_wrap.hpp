#pragma once
/// @file
/// Periodic positions back into the root domain, host and device: one arithmetic for
/// DomainInfo::wrapIntoRoot (ParticleSystem::adjustPositionIntoRootDomain) and the GPU-resident
/// path, so both put a particle at the same place bit for bit.
///
///     grove::gpu::forEach(gas.policy(), gas, grove::WrapIntoRootDomain::of(dinfo));   // device
///     grove::forEach(grove::Cpu{}, psys, grove::WrapIntoRootDomain::of(dinfo));       // host
#include <math.h>

#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/execution.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/core/particle_traits.hpp"

namespace grove {

/// x wrapped into [low, high) (the period high - low); x unchanged when already inside. Host and
/// device. Needs: low < high, both finite.
GROVE_HOST_DEVICE inline double wrapIntoPeriod(double x, double low, double high) {
  if (x >= low && x < high) return x;
  const double length = high - low;
  x = low + ::fmod(x - low, length);
  if (x < low) x += length;
  // Rounding can land exactly on the upper face, which belongs to the next period.
  if (x >= high) x = low;
  return x;
}

/// The wrap of a particle's position on the periodic axes (FP::getPos and FP::setPos).
struct WrapIntoRootDomain {
  Boxd root;                                             ///< the root domain
  BoundaryCondition boundary = BoundaryCondition::OPEN;  ///< the axes to wrap along

  /// The wrap of a DomainInfo's root domain and boundary. Throws grove::Error when the boundary
  /// is periodic but no root domain was set (setPosRootDomain).
  template <class DomainInfoT>
  static WrapIntoRootDomain of(const DomainInfoT& dinfo) {
    require(!isAnyPeriodic(dinfo.getBoundaryCondition()) || dinfo.isRootDomainFixed(), "WrapIntoRootDomain::of",
            "the boundary is periodic but no root domain was set (setPosRootDomain)");
    return {dinfo.getPosRootDomain(), dinfo.getBoundaryCondition()};
  }

  /// pos wrapped into the root along each periodic axis (wrapIntoPeriod()); other axes unchanged.
  GROVE_HOST_DEVICE Vec3d operator()(Vec3d pos) const {
    if (isPeriodic(boundary, 0)) pos.x = wrapIntoPeriod(pos.x, root.low.x, root.high.x);
    if (isPeriodic(boundary, 1)) pos.y = wrapIntoPeriod(pos.y, root.low.y, root.high.y);
    if (isPeriodic(boundary, 2)) pos.z = wrapIntoPeriod(pos.z, root.low.z, root.high.z);
    return pos;
  }
  /// Wraps p's position; calls p.setPos only when it changes.
  template <class FP>
  GROVE_HD_TEMPLATE void operator()(FP& p) const {
    const Vec3d pos = positionOf(p);
    const Vec3d wrapped = (*this)(pos);
    if (wrapped.x != pos.x || wrapped.y != pos.y || wrapped.z != pos.z) p.setPos(wrapped);
  }
};

}  // namespace grove
