#pragma once
// The settings and tree types the GPU-resident tests share (nvcc only): the one-rank suite
// (resident_tree_test.cu) and the multi-rank one (resident_exchange_test.cu).
#include "cuda/gravity_interactions.cuh"
#include "grove/force/resident_tree_long.cuh"

namespace resident_test {

constexpr float kEps2 = 1e-4f;
constexpr double kTheta = 0.5;
constexpr int kLeaf = 16, kGroup = 256;
// The search trees' tests: at 0.8 the plain walk would take about 900 of 30000 bodies'
// neighbours inside superparticles (0.5 opens all but one), so the search is what keeps them.
constexpr double kSearchTheta = 0.8;

using Tree = grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ>;
using QuadTree = grove::gpu::ResidentTreeLong<user::GravityForce, user::GravityEPI, user::GravityEPJ,
                                              grove::MomentQuadrupole, grove::SPJQuadrupole>;
using Ep = user::cuda::GravityEpInteraction;
using SpMono = user::cuda::GravityMonopoleSpInteraction;
using SpQuad = user::cuda::GravityQuadrupoleSpInteraction;

}  // namespace resident_test
