#pragma once
// The Wendland C2 kernel in three dimensions, written with its support radius H (W = 0 for
// r >= H), which is what this sample calls the smoothing length h:
//
//   W(r, H) = 21 / (2 pi H^3) * (1 - q)^4 (1 + 4 q),   q = r / H < 1.
//
// Every function is branch-free (the support enters through max(1 - q, 0)) so the loops that
// call them vectorise, and host and device code share them (SPH_HOST_DEVICE).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "host_device.hpp"

namespace sph::wendland_c2 {

// 21 / (2 pi): W(r, H) = kNorm / H^3 * shape(r / H).
inline constexpr double kNorm = 21.0 / (2.0 * std::numbers::pi);
// (4 pi / 3) * kNorm: the Springel-Hernquist neighbour number (4 pi / 3) H^3 rho / m of a
// particle equals kNeighboursPerShape * sum_j (m_j / m) shape(r_j / H).
inline constexpr double kNeighboursPerShape = 4.0 * std::numbers::pi / 3.0 * kNorm;  // = 14

// w(q) = (1 - q)^4 (1 + 4 q)
SPH_HOST_DEVICE inline double shape(double q) {
  const double a = std::max(1.0 - q, 0.0);
  const double a2 = a * a;
  return a2 * a2 * (1.0 + 4.0 * q);
}

// w'(q) / q = -20 (1 - q)^3: regular at q = 0, so gradients need no division by r.
SPH_HOST_DEVICE inline double slopeOverQ(double q) {
  const double a = std::max(1.0 - q, 0.0);
  return -20.0 * a * a * a;
}

SPH_HOST_DEVICE inline double value(double r, double h) { return kNorm / (h * h * h) * shape(r / h); }

// (1 / r) dW/dr = kNorm / H^5 * w'(q) / q: times the separation vector x_i - x_j it is the
// gradient of W with respect to x_i.
SPH_HOST_DEVICE inline double gradientOverR(double r, double h) {
  const double h2 = h * h;
  return kNorm / (h2 * h2 * h) * slopeOverQ(r / h);
}

}  // namespace sph::wendland_c2
