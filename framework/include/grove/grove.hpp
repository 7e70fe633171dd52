#pragma once
// The whole public API of grove.
#include "grove/config.hpp"
#include "grove/core/box.hpp"
#include "grove/core/error.hpp"
#include "grove/core/list_mode.hpp"
#include "grove/core/types.hpp"
#include "grove/core/vec3.hpp"
#include "grove/comm/comm.hpp"
#include "grove/domain/boundary.hpp"
#include "grove/domain/domain_info.hpp"
#include "grove/io/particle_io.hpp"
#include "grove/particles/particle_system.hpp"
#include "grove/runtime/runtime.hpp"
