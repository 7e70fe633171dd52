#pragma once
// Drop-in for FDPS's particle_simulator.hpp: an FDPS program compiled with this directory
// (framework/include/grove) on its include path and linked with grove::grove finds grove here,
// under the name it already uses.
#include "grove/fdps.hpp"

namespace PS = grove::fdps;
