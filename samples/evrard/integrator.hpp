#pragma once
// Kick-drift-kick leapfrog with one global time step (all particles advance together, so the
// energies in the log are those of one synchronous state).
//   kickDriftPredict   half kick to t + dt/2, drift to t + dt, and v, u predicted at t + dt for
//                      the force passes (the SPH viscosity and du/dt need a velocity there)
//   finalKick          second half kick with the accelerations at t + dt
//   globalTimeStep     min over particles of the Courant, acceleration and energy criteria
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "evrard_particles.hpp"

namespace evrard {

struct TimeStepParameters {
  double cfl = 0.3;          // dt <= cfl * h / v_signal (h the kernel's support radius, as samples/sph)
  double eta_acc = 0.025;    // dt <= sqrt(2 eta_acc eps / |a|)  (GADGET-2's criterion, eps the softening)
  double energy_factor = 0.3;  // dt <= energy_factor * u / |du/dt| where u falls (keeps u positive)
  double dt_max = 0.01;      // also the resolution of the energy curves in time
};

template <class PSys>
void kickDriftPredict(PSys& gas, double dt) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < gas.size(); ++i) {
    EvrardParticle& p = gas[i];
    const grove::Vec3d a = p.totalAcceleration();
    p.vel_half = p.vel + (0.5 * dt) * a;
    p.u_half = p.u + 0.5 * dt * p.du_dt;
    p.pos += dt * p.vel_half;
    p.vel += dt * a;
    p.u += dt * p.du_dt;
  }
}

template <class PSys>
void finalKick(PSys& gas, double dt) {
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < gas.size(); ++i) {
    EvrardParticle& p = gas[i];
    p.vel = p.vel_half + (0.5 * dt) * p.totalAcceleration();
    p.u = p.u_half + 0.5 * dt * p.du_dt;
  }
}

// Which criterion set the step (for the log): the smallest over the ranks.
struct TimeStep {
  double dt = 0, courant = 0, acceleration = 0, energy = 0;
};

// Collective.
template <class PSys>
TimeStep globalTimeStep(const PSys& gas, const TimeStepParameters& p, double softening_eps) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double courant = inf, acceleration = inf, energy = inf;
  for (const EvrardParticle& g : gas) {
    courant = std::min(courant, p.cfl * g.h / g.v_signal);
    const double a = grove::norm(g.totalAcceleration());
    if (a > 0.0) acceleration = std::min(acceleration, std::sqrt(2.0 * p.eta_acc * softening_eps / a));
    if (g.du_dt < 0.0) energy = std::min(energy, p.energy_factor * g.u / -g.du_dt);
  }
  double mins[3] = {courant, acceleration, energy};
  gas.comm().allreduceMin(std::span<double>(mins));
  return {std::min({mins[0], mins[1], mins[2], p.dt_max}), mins[0], mins[1], mins[2]};
}

}  // namespace evrard
