#pragma once
// The particle mesh's compile-time configuration, as in FDPS: SIZE_OF_MESH points per axis.
// Edit it here (or give a folder holding your own param_fdps.h first on the include path);
// PS::PM::ParticleMesh's default constructor takes its mesh size from it.
#define SIZE_OF_MESH 128
