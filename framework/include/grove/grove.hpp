#pragma once
/// @file
/// The whole public API of grove in one include: the runtime, core types, communication,
/// domains, particle systems and their files, and the long- and short-range force trees. The
/// GPU (grove/gpu/), I/O (grove/io/), FMM (grove/fmm/) and particle-mesh (grove/pm/) headers and
/// FDPS's spellings (grove/fdps.hpp) are not listed here: include them by name.
#include "grove/config.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/core/types.hpp"
#include "grove/core/vec3.hpp"
#include "grove/comm/comm.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/particles/particle_files.hpp"
#include "grove/particles/particle_system.hpp"
#include "grove/runtime/runtime.hpp"
#include "grove/force/tree_for_force_long.hpp"
#include "grove/force/tree_for_force_short.hpp"
