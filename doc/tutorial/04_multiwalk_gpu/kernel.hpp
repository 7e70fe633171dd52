// Tutorial 04: what main.cpp (host compiler) and kernel.cu (nvcc) share. nvcc cannot compile all
// of grove (doc/gpu.md, "what a .cu file may include"), so this header brings in only the vector
// type and the superparticle: the particle types the GPU reads, and the functions that move them.
#pragma once
#include "grove/core/vec3.hpp"     // grove::Vec3f is PS::F32vec
#include "grove/tree/moments.hpp"  // grove::SPJMonopole is PS::SPJMonopole

struct FPGrav;  // the full particle: main.cpp's own; the GPU never sees it

// What the kernel adds up for one i-particle.
struct ForceGrav {
  grove::Vec3f acc;
  float pot = 0.0f;
  void clear() { acc = 0.0f, pot = 0.0f; }
};

// An i-particle (receives force): a position. copyFromFP is defined in main.cpp, next to FPGrav.
struct EPIGrav {
  grove::Vec3f pos;
  grove::Vec3f getPos() const { return pos; }
  void copyFromFP(const FPGrav& fp);
};

// A j-particle (exerts force). x, y, z, mass as four floats: kernel.cu copies the tree's whole
// EPJ array to the device byte for byte and reads each one as a float4 (it checks this layout).
struct EPJGrav {
  grove::Vec3f pos;
  float mass = 0.0f;
  grove::Vec3f getPos() const { return pos; }
  float getCharge() const { return mass; }
  void copyFromFP(const FPGrav& fp);
};

// Makes this rank's GPU state on the current device (pick the device first); eps2 is the
// softening length squared. finalizeGravityGpu frees it (call it before PS::Finalize).
void initializeGravityGpu(float eps2);
void finalizeGravityGpu();

// The index form of FDPS's multiwalk pair, for calcForceAllAndWriteBackMultiWalkIndex.
// dispatch: with send_flag, the step's whole EPJ and superparticle arrays (n_walk is then 0);
// otherwise n_walk walks, walk w being n_epi[w] i-particles at epi[w] and the indices id_epj[w]
// (n_epj[w] of them) and id_spj[w] (n_spj[w]) into those whole arrays. It starts the work and
// returns. lists_unchanged (grove's addition to FDPS's signature): this call's index lists are
// those of the same call of the last MAKE_LIST_FOR_REUSE step, already on the device.
int dispatchGravity(int tag, int n_walk, const EPIGrav** epi, const int* n_epi, const int** id_epj,
                    const int* n_epj, const int** id_spj, const int* n_spj, const EPJGrav* epj, int n_epj_total,
                    const grove::SPJMonopole* spj, int n_spj_total, bool send_flag, bool lists_unchanged);
// retrieve: waits for the batch dispatched with this tag and ADDS its forces to force[w][i].
int retrieveGravity(int tag, int n_walk, const int* n_epi, ForceGrav** force);

// What dispatch did since the last reset, to check it: batches (calls with walks), walks,
// interactions computed, and of the batches, those whose index lists crossed the bus and those
// that reused the lists kept on the device.
struct GravityGpuCounts {
  long long batches = 0, walks = 0, interactions = 0, lists_sent = 0, lists_reused = 0;
};
GravityGpuCounts gravityGpuCounts();
void resetGravityGpuCounts();
