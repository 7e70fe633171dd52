#pragma once
/// @file
/// The particle mesh's compile-time configuration, as in FDPS: SIZE_OF_MESH points per axis.
/// Edit it here (or give a folder holding your own param_fdps.h first on the include path);
/// PS::PM::ParticleMesh's default constructor takes its mesh size from it.

/// The mesh points per axis of a default-constructed PS::PM::ParticleMesh (FDPS's SIZE_OF_MESH).
#define SIZE_OF_MESH 128
