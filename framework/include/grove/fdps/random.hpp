#pragma once
/// @file
/// FDPS 7.1's Mersenne twisters (PS::MTTS, PS::MT) with the reference code's member names. Part of
/// grove/fdps.hpp.
#include <cstdint>
#include <random>

#include "grove/fdps/vectors.hpp"

namespace grove::fdps {

// ---- Mersenne twisters with the reference code's (and FDPS's) member names -----------------------------
/// A Mersenne twister (MT19937) object with the reference code's member names. std::mt19937 is
/// MT19937 with the reference seeding (init_genrand), so the streams are the reference ones: the
/// first genrand_int32 after init_genrand(5489), or without any seeding, is 3499211612.
/// Not for concurrent use by several threads.
class MTTS {
 public:
  /// The reference code's unseeded state (the same as init_genrand(5489)).
  MTTS() = default;
  /// Seeds the generator as the reference init_genrand; only the low 32 bits of s are used.
  void init_genrand(unsigned long s) { engine_.seed(static_cast<std::uint32_t>(s & 0xffffffffUL)); }
  /// The next 32-bit draw, uniform on [0, 0xffffffff].
  unsigned long genrand_int32() { return static_cast<unsigned long>(engine_()); }
  /// A draw uniform on [0, 0x7fffffff] (genrand_int32's top 31 bits).
  long genrand_int31() { return static_cast<long>(genrand_int32() >> 1); }
  /// A draw uniform on [0, 1] (both ends included).
  double genrand_real1() { return static_cast<double>(genrand_int32()) * (1.0 / 4294967295.0); }
  /// A draw uniform on [0, 1).
  double genrand_real2() { return static_cast<double>(genrand_int32()) * (1.0 / 4294967296.0); }
  /// A draw uniform on (0, 1) (neither end).
  double genrand_real3() { return (static_cast<double>(genrand_int32()) + 0.5) * (1.0 / 4294967296.0); }
  /// A draw uniform on [0, 1) with 53-bit resolution: 27 bits of one draw above 26 bits of the
  /// next (it consumes two genrand_int32 draws).
  double genrand_res53() {
    const unsigned long a = genrand_int32() >> 5;
    const unsigned long b = genrand_int32() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) * (1.0 / 9007199254740992.0);
  }

 private:
  std::mt19937 engine_;  // default-seeded with 5489, as the reference code's unseeded state
};

/// One process-wide generator, all static (as FDPS's MT; not for concurrent use by threads).
/// Each rank has its own, unseeded until init_genrand: seed it per rank for distinct streams.
class MT {
 public:
  MT() = delete;
  /// MTTS::init_genrand on the process-wide generator.
  static void init_genrand(unsigned long s) { instance().init_genrand(s); }
  /// MTTS::genrand_int32: uniform on [0, 0xffffffff].
  static unsigned long genrand_int32() { return instance().genrand_int32(); }
  /// MTTS::genrand_int31: uniform on [0, 0x7fffffff].
  static long genrand_int31() { return instance().genrand_int31(); }
  /// MTTS::genrand_real1: uniform on [0, 1].
  static double genrand_real1() { return instance().genrand_real1(); }
  /// MTTS::genrand_real2: uniform on [0, 1).
  static double genrand_real2() { return instance().genrand_real2(); }
  /// MTTS::genrand_real3: uniform on (0, 1).
  static double genrand_real3() { return instance().genrand_real3(); }
  /// MTTS::genrand_res53: uniform on [0, 1) with 53-bit resolution.
  static double genrand_res53() { return instance().genrand_res53(); }
  /// Back to the unseeded state.
  static void initialize() { instance() = MTTS(); }

 private:
  static MTTS& instance() {
    static MTTS generator;
    return generator;
  }
};

}  // namespace grove::fdps
