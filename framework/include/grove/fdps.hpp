#pragma once
// FDPS 7.1 spellings of grove, in namespace grove::fdps, so that an FDPS program ports by
// including <particle_simulator.hpp> (which says `namespace PS = grove::fdps;`):
//
//   PS::Initialize(argc, argv);                  // starts a grove::Runtime
//   PS::ParticleSystem<FP> psys;  psys.initialize();
//   PS::DomainInfo dinfo;         dinfo.initialize();
//   dinfo.decomposeDomainAll(psys);  psys.exchangeParticle(dinfo);
//   PS::F64 e = PS::Comm::getSum(e_local);
//   PS::Finalize();
//
// What is grove's own is used directly: F64vec is grove::Vec3<double>, ParticleSystem and
// DomainInfo are grove's, the enum values are grove's. What FDPS has and grove has not (the
// Orthotope and symmetric-matrix value types with FDPS's member names, the static Comm class,
// the Mersenne twisters) is defined here, over grove.
//
// Differences from FDPS that a port can meet (each a compile error, never a silent change):
//  - 3-D only; no S32vec/U64vec (grove's vectors are floating point), no 2-D types.
//  - FDPS's vectors' members getMax, getMin, applyEach, getDistanceSQ, isnan, isinf do not
//    exist on grove::Vec3 (use grove::max/min/norm2/isFinite); narrowing F64vec -> F32vec must
//    be written as a cast.
//  - DomainInfo::getPosDomain/getPosRootDomain return grove::Box (members low, high); assign
//    them to a PS::F64ort to use FDPS's low_/high_.
//  - BOUNDARY_CONDITION_SHEARING_BOX and _USER_DEFINED do not exist; the enumerators' numeric
//    values are grove's (one bit per periodic axis), not FDPS's.
//  - Comm's CommInfo/MPI_Comm handles (getCommInfo, getCommunicator, split, create) are not
//    offered: grove keeps mpi.h out of user code.
//
// The standard headers below are those FDPS's headers bring in; FDPS programs rely on them.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <climits>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <istream>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "grove/config.hpp"
// An FDPS program built for MPI defines PARTICLE_SIMULATOR_MPI_PARALLEL and expects mpi.h from
// FDPS's header (it calls MPI_Allreduce, MPI::COMM_WORLD, PS::GetDataType). Only this door opens
// it: grove's own headers keep mpi.h out.
#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
#if !GROVE_HAS_MPI
#error "PARTICLE_SIMULATOR_MPI_PARALLEL is defined, but grove was built without MPI (GROVE_MPI=OFF)"
#endif
#include <mpi.h>
#endif
#include "grove/comm/comm.hpp"
#include "grove/comm/reduction.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "grove/force/tree_for_force_short.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/core/sym_mat3.hpp"
#include "grove/core/vec3.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/particles/particle_system.hpp"
#include "grove/runtime/runtime.hpp"
#include "grove/fdps/comm_info.hpp"

// ---- FDPS's vector algebra on grove::Vec3 -----------------------------------------------------------
// In namespace grove so that argument-dependent lookup finds them wherever FDPS code multiplies
// two F64vecs. grove itself spells these dot() and cross(); FDPS programs write a * b for the
// inner product and a ^ b for the outer one (mind that ^ binds more loosely than + and *).
namespace grove {

template <class T>
constexpr T operator*(const Vec3<T>& a, const Vec3<T>& b) {
  return dot(a, b);
}
template <class T>
constexpr Vec3<T> operator^(const Vec3<T>& a, const Vec3<T>& b) {
  return cross(a, b);
}
// FDPS's mixed-precision forms: Vector3's operators are members taking the left operand's type,
// so `f32 + f64` is an F32vec and `f64 * f32` an F64 (the right operand converts). Compound
// assignment (`f32 -= f64`) needs nothing here: grove::Vec3 converts implicitly, as Vector3 does.
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator+(const Vec3<T>& a, const Vec3<U>& b) {
  return a + Vec3<T>(b);
}
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator-(const Vec3<T>& a, const Vec3<U>& b) {
  return a - Vec3<T>(b);
}
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr T operator*(const Vec3<T>& a, const Vec3<U>& b) {
  return dot(a, Vec3<T>(b));
}
template <class T, class U>
  requires(!std::same_as<T, U>)
constexpr Vec3<T> operator^(const Vec3<T>& a, const Vec3<U>& b) {
  return cross(a, Vec3<T>(b));
}
template <class T>
std::ostream& operator<<(std::ostream& os, const Vec3<T>& v) {
  return os << v.x << "   " << v.y << "    " << v.z;
}
template <class T>
std::istream& operator>>(std::istream& is, Vec3<T>& v) {
  return is >> v.x >> v.y >> v.z;
}
// DomainInfo's boxes print as FDPS's F64ort does (low, then high), for programs that print them.
template <class T>
std::ostream& operator<<(std::ostream& os, const Box<T>& b) {
  return os << std::setprecision(15) << b.low << "   " << b.high;
}

}  // namespace grove

namespace grove::fdps {

// ---- scalars -----------------------------------------------------------------------------------------
using S32 = int;
using U32 = unsigned int;
using S64 = long long int;
using U64 = unsigned long long int;
using F32 = float;
using F64 = double;
using CountT = U64;
using Count_t = CountT;
// Superparticle moment precision (FDPS's PARTICLE_SIMULATOR_SPMOM_F32 selects single).
#if defined(PARTICLE_SIMULATOR_SPMOM_F32)
using SSP = S32;
using FSP = F32;
#else
using SSP = S64;
using FSP = F64;
#endif

// ---- vectors -----------------------------------------------------------------------------------------
// FDPS's class template name; Vector3<T> is grove::Vec3<T> (T float or double).
template <class T>
using Vector3 = Vec3<T>;
using F32vec = Vec3<F32>;
using F64vec = Vec3<F64>;
using F32vec3 = F32vec;
using F64vec3 = F64vec;
using FSPvec = Vec3<FSP>;

inline constexpr S32 DIMENSION = 3;
inline constexpr S32 DIMENSION_LIMIT = 3;
inline constexpr S32 N_CHILDREN = 8;
inline constexpr S32 TREE_LEVEL_LIMIT = 21;  // 63-bit Morton keys, as FDPS's
inline constexpr F64 LARGE_DOUBLE = std::numeric_limits<F64>::max() * 0.0625;
inline constexpr F64 LARGE_FLOAT = std::numeric_limits<F32>::max() * 0.0625;
inline constexpr S64 LARGE_INT = static_cast<S64>(std::numeric_limits<S32>::max() * 0.0625);

// ---- Orthotope3: FDPS's axis-aligned box value type ---------------------------------------------------
// FDPS's members (low_, high_, merge, overlapped, getCenter, ...), convertible to and from
// grove::Box, so a box from grove (DomainInfo::getPosDomain) can be held as a PS::F64ort.
// Containment of a point is half-open (low_ <= p < high_), overlap of two boxes closed, as in FDPS.
template <std::floating_point T>
class Orthotope3 {
 public:
  Vec3<T> low_;
  Vec3<T> high_;

  // A box of negative volume: merging anything into it gives that thing.
  Orthotope3() { init(); }
  Orthotope3(const Vec3<T>& low, const Vec3<T>& high) : low_(low), high_(high) {}
  // The cube of half-width `half_length` around center.
  Orthotope3(const Vec3<T>& center, T half_length)
      : low_(center - Vec3<T>(half_length)), high_(center + Vec3<T>(half_length)) {}
  Orthotope3(const Box<T>& box) : low_(box.low), high_(box.high) {}
  template <std::floating_point U>
    requires(!std::same_as<U, T>)
  Orthotope3(const Orthotope3<U>& o) : low_(static_cast<Vec3<T>>(o.low_)), high_(static_cast<Vec3<T>>(o.high_)) {}
  template <std::floating_point U>
    requires(!std::same_as<U, T>)
  Orthotope3(const Box<U>& b) : low_(static_cast<Vec3<T>>(b.low)), high_(static_cast<Vec3<T>>(b.high)) {}

  operator Box<T>() const { return {low_, high_}; }

  void initNegativeVolume() {
    low_ = Vec3<T>(static_cast<T>(std::numeric_limits<float>::max() / 128));
    high_ = -low_;
  }
  void init() { initNegativeVolume(); }

  Orthotope3 shift(const Vec3<T>& v) const { return {low_ + v, high_ + v}; }

  void merge(const Orthotope3& o) {
    low_ = min(low_, o.low_);
    high_ = max(high_, o.high_);
  }
  void merge(const Vec3<T>& p) {
    low_ = min(low_, p);
    high_ = max(high_, p);
  }
  // Merges the cube of half-width `size` around p.
  void merge(const Vec3<T>& p, T size) {
    low_ = min(low_, p - Vec3<T>(size));
    high_ = max(high_, p + Vec3<T>(size));
  }

  bool notOverlapped(const Orthotope3& a) const {
    return a.high_.x < low_.x || high_.x < a.low_.x || a.high_.y < low_.y || high_.y < a.low_.y ||
           a.high_.z < low_.z || high_.z < a.low_.z;
  }
  bool overlapped(const Orthotope3& a) const { return !notOverlapped(a); }
  bool notOverlapped(const Vec3<T>& p) const {
    return p.x < low_.x || high_.x <= p.x || p.y < low_.y || high_.y <= p.y || p.z < low_.z || high_.z <= p.z;
  }
  bool overlapped(const Vec3<T>& p) const { return !notOverlapped(p); }
  // FDPS's newer name for a point inside the box (low_ <= p < high_).
  bool contained(const Vec3<T>& p) const { return !notOverlapped(p); }
  bool notContains(const Orthotope3& a) const {
    return a.low_.x < low_.x || high_.x < a.high_.x || a.low_.y < low_.y || high_.y < a.high_.y ||
           a.low_.z < low_.z || high_.z < a.high_.z;
  }
  bool contains(const Orthotope3& a) const { return !notContains(a); }

  Vec3<T> getCenter() const { return (high_ + low_) * T(0.5); }
  Vec3<T> getHalfLength() const { return (high_ - low_) * T(0.5); }
  Vec3<T> getFullLength() const { return high_ - low_; }

  // Squared distance between the nearest points of two boxes (0 when they overlap).
  T getDistanceMinSQ(const Orthotope3& o) const {
    auto gap = [](T lo_a, T hi_a, T lo_b, T hi_b) -> T {
      if (hi_b < lo_a) return lo_a - hi_b;
      if (hi_a < lo_b) return lo_b - hi_a;
      return T(0);
    };
    const T dx = gap(low_.x, high_.x, o.low_.x, o.high_.x), dy = gap(low_.y, high_.y, o.low_.y, o.high_.y),
            dz = gap(low_.z, high_.z, o.low_.z, o.high_.z);
    return dx * dx + dy * dy + dz * dz;
  }
  // Squared distance from a point to the box (0 inside).
  T getDistanceMinSQ(const Vec3<T>& p) const {
    auto gap = [](T v, T lo, T hi) -> T { return v > hi ? v - hi : (v < lo ? lo - v : T(0)); };
    const T dx = gap(p.x, low_.x, high_.x), dy = gap(p.y, low_.y, high_.y), dz = gap(p.z, low_.z, high_.z);
    return dx * dx + dy * dy + dz * dz;
  }

  friend std::ostream& operator<<(std::ostream& os, const Orthotope3& o) {
    return os << std::setprecision(15) << o.low_ << "   " << o.high_;
  }
};

using F32ort = Orthotope3<F32>;
using F64ort = Orthotope3<F64>;
using F32ort3 = F32ort;
using F64ort3 = F64ort;

// ---- MatrixSym3: FDPS's symmetric 3x3 matrix -----------------------------------------------------------
// FDPS's members (getTrace, a scalar constructor, - and /) over the six components. It converts
// from any type with the same six members and to grove::SymMat3 (the tree's quadrupoles), so
// either can be assigned to the other; arithmetic mixing the two needs one of them converted.
template <class M, class T>
concept SymmetricMatrixLike = requires(const M& m) {
  { m.xx } -> std::convertible_to<T>;
  { m.yy } -> std::convertible_to<T>;
  { m.zz } -> std::convertible_to<T>;
  { m.xy } -> std::convertible_to<T>;
  { m.xz } -> std::convertible_to<T>;
  { m.yz } -> std::convertible_to<T>;
};

template <std::floating_point T>
struct MatrixSym3 {
  T xx{}, yy{}, zz{}, xy{}, xz{}, yz{};

  constexpr MatrixSym3() = default;
  constexpr MatrixSym3(T xx_, T yy_, T zz_, T xy_, T xz_, T yz_)
      : xx(xx_), yy(yy_), zz(zz_), xy(xy_), xz(xz_), yz(yz_) {}
  // Implicit, as in FDPS: `F64mat quad = 0.0;`.
  constexpr MatrixSym3(T s) : xx(s), yy(s), zz(s), xy(s), xz(s), yz(s) {}
  template <class M>
    requires(!std::same_as<M, MatrixSym3> && SymmetricMatrixLike<M, T>)
  constexpr MatrixSym3(const M& m)
      : xx(static_cast<T>(m.xx)), yy(static_cast<T>(m.yy)), zz(static_cast<T>(m.zz)), xy(static_cast<T>(m.xy)),
        xz(static_cast<T>(m.xz)), yz(static_cast<T>(m.yz)) {}

  constexpr operator SymMat3<T>() const { return {xx, yy, zz, xy, xz, yz}; }

  constexpr MatrixSym3& operator+=(const MatrixSym3& o) {
    xx += o.xx; yy += o.yy; zz += o.zz; xy += o.xy; xz += o.xz; yz += o.yz;
    return *this;
  }
  constexpr MatrixSym3& operator-=(const MatrixSym3& o) {
    xx -= o.xx; yy -= o.yy; zz -= o.zz; xy -= o.xy; xz -= o.xz; yz -= o.yz;
    return *this;
  }
  constexpr MatrixSym3& operator*=(T s) {
    xx *= s; yy *= s; zz *= s; xy *= s; xz *= s; yz *= s;
    return *this;
  }
  constexpr MatrixSym3& operator/=(T s) { return *this *= T(1) / s; }
  friend constexpr MatrixSym3 operator+(MatrixSym3 a, const MatrixSym3& b) { return a += b; }
  friend constexpr MatrixSym3 operator-(MatrixSym3 a, const MatrixSym3& b) { return a -= b; }
  friend constexpr MatrixSym3 operator-(MatrixSym3 a) { return a *= T(-1); }
  friend constexpr MatrixSym3 operator*(MatrixSym3 a, T s) { return a *= s; }
  friend constexpr MatrixSym3 operator*(T s, MatrixSym3 a) { return a *= s; }
  friend constexpr MatrixSym3 operator/(MatrixSym3 a, T s) { return a /= s; }
  friend constexpr bool operator==(const MatrixSym3&, const MatrixSym3&) = default;
  // The matrix times a vector.
  constexpr Vec3<T> operator*(const Vec3<T>& v) const {
    return {xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z};
  }
  constexpr T getTrace() const { return xx + yy + zz; }

  friend std::ostream& operator<<(std::ostream& os, const MatrixSym3& m) {
    os << m.xx << "   " << m.xy << "    " << m.xz << '\n';
    os << m.xy << "   " << m.yy << "    " << m.yz << '\n';
    return os << m.xz << "   " << m.yz << "    " << m.zz << '\n';
  }
};

using F32mat = MatrixSym3<F32>;
using F64mat = MatrixSym3<F64>;
using F32mat3 = F32mat;
using F64mat3 = F64mat;
using FSPmat = MatrixSym3<FSP>;

}  // namespace grove::fdps

// Symmetric matrices reduce element by element (PS::Comm::getSum of a quadrupole).
template <class T>
struct grove::ReductionLayout<grove::fdps::MatrixSym3<T>> {
  using Scalar = T;
  static constexpr std::size_t count = 6;
};

namespace grove::fdps {

// ---- enums -----------------------------------------------------------------------------------------
using BOUNDARY_CONDITION = BoundaryCondition;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_OPEN = BoundaryCondition::OPEN;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_X = BoundaryCondition::PERIODIC_X;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_Y = BoundaryCondition::PERIODIC_Y;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_Z = BoundaryCondition::PERIODIC_Z;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XY = BoundaryCondition::PERIODIC_XY;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XZ = BoundaryCondition::PERIODIC_XZ;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_YZ = BoundaryCondition::PERIODIC_YZ;
inline constexpr BOUNDARY_CONDITION BOUNDARY_CONDITION_PERIODIC_XYZ = BoundaryCondition::PERIODIC_XYZ;

using INTERACTION_LIST_MODE = InteractionListMode;
using ::grove::MAKE_LIST;
using ::grove::MAKE_LIST_FOR_REUSE;
using ::grove::REUSE_LIST;

// ---- classes -----------------------------------------------------------------------------------------
template <class FP>
using ParticleSystem = ::grove::ParticleSystem<FP>;
using DomainInfo = ::grove::DomainInfo;
using TimeProfile = ::grove::TimeProfile;

// ---- Tree classes ------------------------------------------------------------------------------------
// PS::TreeForForceLong<Force, EPI, EPJ>::Monopole (and Quadrupole, MonopoleGeometricCenter,
// DipoleGeometricCenter, QuadrupoleGeometricCenter) are grove's trees.
// PS::TreeForForceLong<Force, EPI, EPJ>::MonopoleWithCutoff and
// PS::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::WithCutoff: FDPS's SEARCH_MODE_LONG_CUTOFF.
template <class Force, class EPI, class EPJ, class Moment = void, class SPJ = void>
using TreeForForceLong = ::grove::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>;
using ::grove::MomentMonopoleCutoff;
using ::grove::SPJMonopoleCutoff;
// PS::TreeForForceLong<Force, EPI, EPJ>::{Monopole, Quadrupole}With{Scatter, Symmetry}Search and
// PS::TreeForForceLong<Force, EPI, EPJ, Moment, SPJ>::With{Scatter, Symmetry}Search: FDPS's
// SEARCH_MODE_LONG_SCATTER / LONG_SYMMETRY.
using ::grove::MomentMonopoleScatter;
using ::grove::MomentMonopoleSymmetry;
using ::grove::MomentQuadrupoleScatter;
using ::grove::MomentQuadrupoleSymmetry;
using ::grove::SPJMonopoleScatter;
using ::grove::SPJMonopoleSymmetry;
using ::grove::SPJQuadrupoleScatter;
using ::grove::SPJQuadrupoleSymmetry;

using ::grove::MomentDipoleGeometricCenter;
using ::grove::MomentMonopole;
using ::grove::MomentMonopoleGeometricCenter;
using ::grove::MomentQuadrupole;
using ::grove::MomentQuadrupoleGeometricCenter;
using ::grove::SPJDipoleGeometricCenter;
using ::grove::SPJMonopole;
using ::grove::SPJMonopoleGeometricCenter;
using ::grove::SPJQuadrupole;
using ::grove::SPJQuadrupoleGeometricCenter;

template <class Force, class EPI, class EPJ>
using TreeForForceShort = ::grove::TreeForForceShort<Force, EPI, EPJ>;

// FDPS's LET exchange modes; both point-to-point flavours map to grove's point-to-point mode,
// which is exact (far ranks enter as their root superparticle, as the criterion allows).
using EXCHANGE_LET_MODE = ::grove::LetExchangeMode;
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_A2A = ::grove::LetExchangeMode::ALL_TO_ALL;
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_P2P_EXACT = ::grove::LetExchangeMode::POINT_TO_POINT;
inline constexpr EXCHANGE_LET_MODE EXCHANGE_LET_P2P_FAST = ::grove::LetExchangeMode::POINT_TO_POINT_FAST;

// ---- Initialize / Finalize / Abort ---------------------------------------------------------------------
namespace detail {
// The runtime an FDPS program starts with Initialize and stops with Finalize (or at exit).
inline std::unique_ptr<Runtime>& runtimeSlot() {
  static std::unique_ptr<Runtime> runtime;
  return runtime;
}
}  // namespace detail

// Starts MPI (when grove has it) and OpenMP. mpool_size sized FDPS's memory pool; grove has none.
inline void Initialize(int& argc, char**& argv, const S64 mpool_size = 100000000) {
  (void)mpool_size;
  auto& runtime = detail::runtimeSlot();
  require(!runtime, "PS::Initialize", "called twice without PS::Finalize in between");
  runtime = std::make_unique<Runtime>(argc, argv);
}

// Stops what Initialize started. No grove object may be used afterwards.
inline void Finalize() { detail::runtimeSlot().reset(); }

// Ends every rank at once with exit code err (FDPS: MPI_Abort).
[[noreturn]] inline void Abort(const int err = -1) {
  Runtime::abortAll(fmt::format("PS::Abort({}) called on rank {}", err, ::grove::detail::worldRankForMessages()), err);
}

// Seconds on a monotonic clock; differences are elapsed time.
inline F64 GetWtime() {
  return std::chrono::duration<F64>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline F64 GetWtimeNoBarrier() { return GetWtime(); }

// ---- Comm: FDPS's static communication class, over the world grove::Comm -------------------------------
class Comm {
 public:
  Comm() = delete;

  static S32 getRank() { return world().rank(); }
  static S32 getNumberOfProc() { return world().size(); }
  static S32 getNumberOfThread() {
#if defined(_OPENMP)
    return omp_get_max_threads();
#else
    return 1;
#endif
  }
  // Threads in the current parallel region, and this thread's number in it.
  static S32 getNumThreads() {
#if defined(_OPENMP)
    return omp_get_num_threads();
#else
    return 1;
#endif
  }
  static S32 getThreadNum() {
#if defined(_OPENMP)
    return omp_get_thread_num();
#else
    return 0;
#endif
  }

  static void barrier() { world().barrier(); }
#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
  // The communicator the PS::Comm calls use (MPI_COMM_WORLD, as in FDPS).
  static MPI_Comm getCommunicator() {
    return *static_cast<const MPI_Comm*>(::grove::detail::nativeComm(world().handle()));
  }
#endif
  static bool synchronizeConditionalBranchAND(const bool& local) { return info().synchronizeConditionalBranchAND(local); }
  static bool synchronizeConditionalBranchOR(const bool& local) { return info().synchronizeConditionalBranchOR(local); }

  // ---- reductions: arithmetic types, F32vec/F64vec, F32mat/F64mat (CommInfo's, over the world) ----
  template <class T>
  static T getSum(const T& value) {
    return info().getSum(value);
  }
  template <class T>
  static T getMinValue(const T& value) {
    return info().getMinValue(value);
  }
  template <class T>
  static T getMaxValue(const T& value) {
    return info().getMaxValue(value);
  }
  // MPI_MINLOC / MPI_MAXLOC: the extreme f_in of all ranks and the i_in that came with it (the
  // smallest such i_in on a tie). Typically i_in is the rank.
  template <class Tfloat, class Tint>
  static void getMinValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) {
    info().getMinValue(f_in, i_in, f_out, i_out);
  }
  template <class Tfloat, class Tint>
  static void getMaxValue(const Tfloat& f_in, const Tint& i_in, Tfloat& f_out, Tint& i_out) {
    info().getMaxValue(f_in, i_in, f_out, i_out);
  }

  // ---- broadcast, gather, scatter, all-to-all (T trivially copyable) ------------------------------
  template <class T>
  static void broadcast(T* values, const int n, const int src = 0) {
    info().broadcast(values, n, src);
  }
  // n values from every rank, in rank order, on dst.
  template <class T>
  static void gather(const T* send, const int n, T* recv, const int dst = 0) {
    std::vector<int> counts;
    const auto all = world().gatherv(std::span<const T>(send, static_cast<std::size_t>(n)), dst, &counts);
    if (getRank() == dst) std::copy(all.begin(), all.end(), recv);
  }
  // n_send values from every rank; on dst, rank r's land at recv + n_recv_disp[r] (n_recv[r] of them).
  template <class T>
  static void gatherV(const T* send, const int n_send, T* recv, const int* n_recv, const int* n_recv_disp,
                      const int dst = 0) {
    std::vector<int> counts;
    const auto all = world().gatherv(std::span<const T>(send, static_cast<std::size_t>(n_send)), dst, &counts);
    if (getRank() == dst) unpack(all, counts, recv, n_recv, n_recv_disp, "PS::Comm::gatherV");
  }
  template <class T>
  static void allGather(const T* send, const int n, T* recv) {
    const auto all = world().allgatherv(std::span<const T>(send, static_cast<std::size_t>(n)));
    std::copy(all.begin(), all.end(), recv);
  }
  template <class T>
  static void allGatherV(const T* send, const int n_send, T* recv, const int* n_recv, const int* n_recv_disp) {
    std::vector<int> counts;
    const auto all = world().allgatherv(std::span<const T>(send, static_cast<std::size_t>(n_send)), &counts);
    unpack(all, counts, recv, n_recv, n_recv_disp, "PS::Comm::allGatherV");
  }
  // src sends n values to each rank (rank r gets send[r n, (r+1) n)).
  template <class T>
  static void scatter(const T* send, const int n, T* recv, const int src = 0) {
    const int ranks = getNumberOfProc();
    std::vector<int> counts(static_cast<std::size_t>(ranks), getRank() == src ? n : 0);
    std::vector<T> out(send, send + (getRank() == src ? static_cast<std::size_t>(n) * ranks : 0));
    const auto mine = toEachRank(out, counts, src);
    std::copy(mine.begin(), mine.end(), recv);
  }
  // src sends n_send[r] values from send + n_send_disp[r] to rank r; each receives n_recv.
  template <class T>
  static void scatterV(const T* send, const int* n_send, const int* n_send_disp, T* recv, const int n_recv,
                       const int src = 0) {
    const int ranks = getNumberOfProc();
    std::vector<int> counts(static_cast<std::size_t>(ranks), 0);
    std::vector<T> out;
    if (getRank() == src) {
      for (int r = 0; r < ranks; ++r) {
        counts[static_cast<std::size_t>(r)] = n_send[r];
        out.insert(out.end(), send + n_send_disp[r], send + n_send_disp[r] + n_send[r]);
      }
    }
    const auto mine = toEachRank(out, counts, src);
    require(static_cast<int>(mine.size()) == n_recv, "PS::Comm::scatterV", "received {} values, expected {}",
            mine.size(), n_recv);
    std::copy(mine.begin(), mine.end(), recv);
  }
  // n values to every rank: send[r n, (r+1) n) goes to rank r; recv gets them in rank order.
  template <class T>
  static void allToAll(const T* send, const int n, T* recv) {
    const int ranks = getNumberOfProc();
    const std::vector<int> counts(static_cast<std::size_t>(ranks), n);
    const auto all = world().alltoallv(std::span<const T>(send, static_cast<std::size_t>(n) * ranks),
                                       std::span<const int>(counts));
    std::copy(all.begin(), all.end(), recv);
  }
  template <class T>
  static void allToAllV(const T* send, const int* n_send, const int* n_send_disp, T* recv, const int* n_recv,
                        const int* n_recv_disp) {
    const int ranks = getNumberOfProc();
    std::vector<T> packed;
    std::vector<int> counts(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      counts[static_cast<std::size_t>(r)] = n_send[r];
      packed.insert(packed.end(), send + n_send_disp[r], send + n_send_disp[r] + n_send[r]);
    }
    std::vector<int> got;
    const auto all = world().alltoallv(std::span<const T>(packed), std::span<const int>(counts), &got);
    unpack(all, got, recv, n_recv, n_recv_disp, "PS::Comm::allToAllV");
  }

  // ---- point to point (blocking) --------------------------------------------------------------
  template <class T>
  static int send(const T* values, const int n, const int dst = 0, const int tag = 0) {
    world().isend(std::span<const T>(values, static_cast<std::size_t>(n)), dst, tag).wait();
    return 0;
  }
  template <class T>
  static int recv(T* values, const int n, const int src = 0, const int tag = 0) {
    world().irecv(std::span<T>(values, static_cast<std::size_t>(n)), src, tag).wait();
    return 0;
  }

 private:
  static ::grove::Comm world() { return ::grove::Comm::world(); }
  static CommInfo info() { return CommInfo::world(); }

  template <class T>
  static std::vector<T> toEachRank(const std::vector<T>& out, const std::vector<int>& counts, int /*src*/) {
    return world().alltoallv(std::span<const T>(out), std::span<const int>(counts));
  }
  // Places each rank's block (blocks back to back in `all`, lengths `counts`) at its displacement.
  template <class T>
  static void unpack(const std::vector<T>& all, const std::vector<int>& counts, T* recv, const int* n_recv,
                     const int* n_recv_disp, const char* what) {
    std::size_t offset = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      require(counts[r] == n_recv[r], what, "rank {} sent {} values, but n_recv[{}] = {}", r, counts[r], r, n_recv[r]);
      std::copy(all.begin() + static_cast<std::ptrdiff_t>(offset),
                all.begin() + static_cast<std::ptrdiff_t>(offset) + counts[r], recv + n_recv_disp[r]);
      offset += static_cast<std::size_t>(counts[r]);
    }
  }
};

// ---- Mersenne twisters with the reference code's (and FDPS's) member names -----------------------------
// std::mt19937 is MT19937 with the reference seeding (init_genrand), so the streams are the
// reference ones: the first genrand_int32 after init_genrand(5489), or without any seeding, is
// 3499211612.
class MTTS {
 public:
  MTTS() = default;
  void init_genrand(unsigned long s) { engine_.seed(static_cast<std::uint32_t>(s & 0xffffffffUL)); }
  // [0, 0xffffffff]
  unsigned long genrand_int32() { return static_cast<unsigned long>(engine_()); }
  // [0, 0x7fffffff]
  long genrand_int31() { return static_cast<long>(genrand_int32() >> 1); }
  // [0, 1]
  double genrand_real1() { return static_cast<double>(genrand_int32()) * (1.0 / 4294967295.0); }
  // [0, 1)
  double genrand_real2() { return static_cast<double>(genrand_int32()) * (1.0 / 4294967296.0); }
  // (0, 1)
  double genrand_real3() { return (static_cast<double>(genrand_int32()) + 0.5) * (1.0 / 4294967296.0); }
  // [0, 1) with 53-bit resolution: 27 bits of one draw above 26 bits of the next.
  double genrand_res53() {
    const unsigned long a = genrand_int32() >> 5;
    const unsigned long b = genrand_int32() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0);
  }

 private:
  std::mt19937 engine_;  // default-seeded with 5489, as the reference code's unseeded state
};

// One process-wide generator, all static (as FDPS's MT; not for concurrent use by threads).
class MT {
 public:
  MT() = delete;
  static void init_genrand(unsigned long s) { instance().init_genrand(s); }
  static unsigned long genrand_int32() { return instance().genrand_int32(); }
  static long genrand_int31() { return instance().genrand_int31(); }
  static double genrand_real1() { return instance().genrand_real1(); }
  static double genrand_real2() { return instance().genrand_real2(); }
  static double genrand_real3() { return instance().genrand_real3(); }
  static double genrand_res53() { return instance().genrand_res53(); }
  // Back to the unseeded state.
  static void initialize() { instance() = MTTS(); }

 private:
  static MTTS& instance() {
    static MTTS generator;
    return generator;
  }
};

}  // namespace grove::fdps

#include "grove/fdps/timer.hpp"
#include "grove/fdps/tree_for_force.hpp"
#include "grove/fdps/utilities.hpp"


#if defined(PARTICLE_SIMULATOR_MPI_PARALLEL)
#include "grove/fdps/mpi_datatype.hpp"
#endif

// FDPS's extension namespace ParticleMesh (alias PM): PS::PM::ParticleMesh, where grove was
// built with FFTW (GROVE_HAS_PM). Grove's own spelling is grove::pm (grove/pm/particle_mesh.hpp).
#if GROVE_HAS_PM
#include "grove/pm/particle_mesh.hpp"
namespace grove::fdps {
namespace ParticleMesh {
using ::grove::pm::CUTOFF_RADIUS;
using ::grove::pm::ParticleMesh;
using ::grove::pm::cutoffForceFactor;
using ::grove::pm::cutoffPotentialFactor;
using ::grove::pm::longRangeSelfPotential;
}  // namespace ParticleMesh
namespace PM = ParticleMesh;
}  // namespace grove::fdps
#endif
