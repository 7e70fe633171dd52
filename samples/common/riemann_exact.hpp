#pragma once
// The exact solution of the Riemann problem of the 1-D Euler equations for an ideal gas
// (Toro, "Riemann Solvers and Numerical Methods for Fluid Dynamics", 3rd ed., ch. 4): the star
// pressure from Newton iteration on the pressure function, then the self-similar solution
// sampled at S = x / t. Independent of SPH; used to score the shock tube.
#include <algorithm>
#include <cmath>

#include "grove/core/error.hpp"

namespace sph {

struct GasState {
  double density = 0, velocity = 0, pressure = 0;
};

class ExactRiemannSolver {
 public:
  ExactRiemannSolver(GasState left, GasState right, double gamma) : l_(left), r_(right), g_(gamma) {
    grove::require(l_.density > 0 && r_.density > 0 && l_.pressure > 0 && r_.pressure > 0, "ExactRiemannSolver",
                   "densities and pressures must be positive (left {} {}, right {} {})", l_.density, l_.pressure,
                   r_.density, r_.pressure);
    cl_ = std::sqrt(g_ * l_.pressure / l_.density);
    cr_ = std::sqrt(g_ * r_.pressure / r_.density);
    grove::require(2.0 / (g_ - 1.0) * (cl_ + cr_) > r_.velocity - l_.velocity, "ExactRiemannSolver",
                   "the initial states generate a vacuum, which this solver does not treat");
    solveStar();
  }

  double starPressure() const { return p_star_; }
  double starVelocity() const { return u_star_; }
  double starDensityLeft() const { return starDensity(l_, p_star_); }
  double starDensityRight() const { return starDensity(r_, p_star_); }

  // The state at x / t = s (the discontinuity starts at x = 0, t = 0).
  GasState sample(double s) const { return s <= u_star_ ? sampleLeft(s) : sampleRight(s); }

 private:
  // f_K(p) and its derivative: the velocity change across the wave of side K (shock when
  // p > p_K, rarefaction otherwise).
  void pressureFunction(double p, const GasState& k, double c, double& f, double& df) const {
    if (p > k.pressure) {
      const double a = 2.0 / ((g_ + 1.0) * k.density), b = (g_ - 1.0) / (g_ + 1.0) * k.pressure;
      const double root = std::sqrt(a / (p + b));
      f = (p - k.pressure) * root;
      df = root * (1.0 - 0.5 * (p - k.pressure) / (p + b));
    } else {
      const double ratio = p / k.pressure;
      f = 2.0 * c / (g_ - 1.0) * (std::pow(ratio, (g_ - 1.0) / (2.0 * g_)) - 1.0);
      df = std::pow(ratio, -(g_ + 1.0) / (2.0 * g_)) / (k.density * c);
    }
  }

  void solveStar() {
    // Primitive-variable (linearised) guess, kept positive.
    const double pvrs = 0.5 * (l_.pressure + r_.pressure) -
                        0.125 * (r_.velocity - l_.velocity) * (l_.density + r_.density) * (cl_ + cr_);
    double p = std::max(pvrs, 1e-8 * std::min(l_.pressure, r_.pressure));
    const double du = r_.velocity - l_.velocity;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double fl, dfl, fr, dfr;
      pressureFunction(p, l_, cl_, fl, dfl);
      pressureFunction(p, r_, cr_, fr, dfr);
      double next = p - (fl + fr + du) / (dfl + dfr);
      if (next <= 0.0) next = 0.5 * p;
      const double change = 2.0 * std::abs(next - p) / (next + p);
      p = next;
      if (change < 1e-14) break;
    }
    double fl, dfl, fr, dfr;
    pressureFunction(p, l_, cl_, fl, dfl);
    pressureFunction(p, r_, cr_, fr, dfr);
    p_star_ = p;
    u_star_ = 0.5 * (l_.velocity + r_.velocity) + 0.5 * (fr - fl);
  }

  double starDensity(const GasState& k, double p) const {
    const double ratio = p / k.pressure;
    if (p > k.pressure) {
      const double g6 = (g_ - 1.0) / (g_ + 1.0);
      return k.density * (ratio + g6) / (g6 * ratio + 1.0);
    }
    return k.density * std::pow(ratio, 1.0 / g_);
  }

  // Inside a rarefaction fan, at s = x / t; sign = +1 for the left wave, -1 for the right.
  GasState fan(const GasState& k, double c, double s, double sign) const {
    const double gp = g_ + 1.0, gm = g_ - 1.0;
    const double u = 2.0 / gp * (sign * c + 0.5 * gm * k.velocity + s);
    const double c_fan = 2.0 / gp * (c + sign * 0.5 * gm * (k.velocity - s));
    return {k.density * std::pow(c_fan / c, 2.0 / gm), u, k.pressure * std::pow(c_fan / c, 2.0 * g_ / gm)};
  }

  GasState sampleLeft(double s) const {
    const GasState star{starDensityLeft(), u_star_, p_star_};
    if (p_star_ > l_.pressure) {
      const double shock = l_.velocity - cl_ * std::sqrt((g_ + 1.0) / (2.0 * g_) * p_star_ / l_.pressure +
                                                         (g_ - 1.0) / (2.0 * g_));
      return s <= shock ? l_ : star;
    }
    const double head = l_.velocity - cl_;
    const double tail = u_star_ - cl_ * std::pow(p_star_ / l_.pressure, (g_ - 1.0) / (2.0 * g_));
    if (s <= head) return l_;
    return s >= tail ? star : fan(l_, cl_, s, +1.0);
  }

  GasState sampleRight(double s) const {
    const GasState star{starDensityRight(), u_star_, p_star_};
    if (p_star_ > r_.pressure) {
      const double shock = r_.velocity + cr_ * std::sqrt((g_ + 1.0) / (2.0 * g_) * p_star_ / r_.pressure +
                                                         (g_ - 1.0) / (2.0 * g_));
      return s >= shock ? r_ : star;
    }
    const double head = r_.velocity + cr_;
    const double tail = u_star_ + cr_ * std::pow(p_star_ / r_.pressure, (g_ - 1.0) / (2.0 * g_));
    if (s >= head) return r_;
    return s <= tail ? star : fan(r_, cr_, s, -1.0);
  }

  GasState l_, r_;
  double g_;
  double cl_ = 0, cr_ = 0, p_star_ = 0, u_star_ = 0;
};

}  // namespace sph
