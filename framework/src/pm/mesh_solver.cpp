// The particle-mesh solver: TSC assignment, the FFT Poisson solve with the optimal influence
// function for the S2-split long-range force, and TSC interpolation. The FFT and the mesh
// transfers between ranks are SlabFft's (slab_fft_mpi.cpp or slab_fft_serial.cpp).
//
// Data flow of one solve, per rank:
//   1 assign   this rank's particles -> a full N^3 mesh of mass per mesh point (TSC, periodic)
//   2 reduce   all ranks' full meshes summed, each rank receiving only its FFT x-slab
//   3 forward  distributed r2c FFT of the density slabs
//   4 multiply each rank's Fourier slab by the influence functions: 3 force components (ik) and
//              the potential
//   5 backward 4 distributed c2r FFTs, giving x-slabs of the 4 fields
//   6 gather   every rank all-gathers the 4 fields' slabs into full meshes (float)
//   7 interpolate at any position (TSC), without communication
// The full meshes (1 double + 4 float per point: 24 MB per rank at N = 128) are the price of
// needing no ghost-region bookkeeping against grove's arbitrary domain boxes.
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <numbers>
#include <stdexcept>

#include "grove/pm/particle_mesh.hpp"
#include "slab_fft.hpp"

namespace grove::pm {

namespace {

constexpr double kPi = std::numbers::pi;

// TSC weights of the three mesh points nearest to u (in mesh units), and the first one's index.
struct TscStencil {
  std::array<int, 3> first{};
  std::array<std::array<double, 3>, 3> w{};  // [axis][point]
};

TscStencil tscStencil(const Vec3d& pos, const Vec3d& low, double inv_h, int n) {
  TscStencil s;
  for (int a = 0; a < 3; ++a) {
    double u = (pos[a] - low[a]) * inv_h;
    u -= n * std::floor(u / n);  // periodic wrap into [0, n)
    const double nearest = std::floor(u + 0.5);
    const double d = u - nearest;  // in [-0.5, 0.5)
    s.first[a] = static_cast<int>(nearest) - 1;
    s.w[a][0] = 0.5 * (0.5 - d) * (0.5 - d);
    s.w[a][1] = 0.75 - d * d;
    s.w[a][2] = 0.5 * (0.5 + d) * (0.5 + d);
  }
  return s;
}

inline int wrapIndex(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

// The Fourier transform of the S2 sphere of radius r_cut / 2, x = k r_cut / 2:
// 12 (2 - 2 cos x - x sin x) / x^4, with its series near 0 where the closed form cancels.
double s2Shape(double x) {
  if (x < 0.1) {
    const double x2 = x * x;
    return 1.0 - x2 / 15.0 + x2 * x2 / 560.0;
  }
  return 12.0 * (2.0 - 2.0 * std::cos(x) - x * std::sin(x)) / (x * x * x * x);
}

// sinc(x)^6: the square of the TSC window per axis.
double tscWindowSquared(double x) {
  if (std::abs(x) < 1e-12) return 1.0;
  const double s = std::sin(x) / x;
  const double s2 = s * s;
  return s2 * s2 * s2;
}

// Signed wavenumber index of stored index j on an axis of n points; the Nyquist index n/2 stays
// positive (and is excluded from differentiation).
inline int signedIndex(int j, int n) { return j <= n / 2 ? j : j - n; }

}  // namespace

struct MeshSolver::Impl {
  detail::SlabFft fft;
  int n;
  Vec3d low{};
  double side = 0.0;
  double r_cut = 0.0;
  double green_side = -1.0, green_r_cut = -1.0;  // what the influence functions were built for
  std::vector<double> green_force;    // per local Fourier element
  std::vector<double> green_potential;
  std::vector<double> density;        // full mesh, mass per point
  detail::SlabFft::Buffer spectrum;
  std::array<detail::SlabFft::Buffer, 4> work;
  std::array<std::vector<float>, 4> field;  // full meshes: acceleration x, y, z; potential

  Impl(int mesh_size, const void* native_comm) : fft(mesh_size, native_comm), n(mesh_size) {}

  std::size_t fourierCount() const {
    return static_cast<std::size_t>(fft.kFirstCount()) * n * (n / 2 + 1);
  }
  // The signed wavenumber indices (x, y, z) of local Fourier element (a, b, c).
  std::array<int, 3> waveIndices(std::ptrdiff_t a, int b, int c) const {
    const int first = signedIndex(static_cast<int>(fft.kFirstStart() + a), n);
    const int second = signedIndex(b, n);
    return fft.transposed() ? std::array<int, 3>{second, first, c} : std::array<int, 3>{first, second, c};
  }

  // body(e, idx) for every local Fourier element e with wavenumber indices idx, in parallel.
  template <class Body>
  void forEachMode(Body&& body) const {
    const std::ptrdiff_t first_count = fft.kFirstCount();
    const int nz = n / 2 + 1;
#pragma omp parallel for collapse(2) schedule(static)
    for (std::ptrdiff_t a = 0; a < first_count; ++a)
      for (int b = 0; b < n; ++b)
        for (int c = 0; c < nz; ++c) body((static_cast<std::size_t>(a) * n + b) * nz + c, waveIndices(a, b, c));
  }
  // The ik derivative's wavenumber along one axis: k without its Nyquist component.
  double derivativeWavenumber(int index) const { return 2 * index == n ? 0.0 : 2.0 * kPi / side * index; }

  void buildInfluenceFunctions();
  void assign(std::span<const Vec3d> pos, std::span<const double> charge);
  void multiplyAndTransformBack();
};

// Hockney & Eastwood's optimal influence functions (sec. 8-2) for TSC assignment/interpolation
// and ik differentiation, with the reference long-range potential psi(k) = 4 pi S2(k r_cut/2)^2 / k^2:
//   force:     G(k) = sum_m U^2(k_m) (D . k_m) psi(k_m) / (|D|^2 [sum_m U^2(k_m)]^2)
//   potential: G(k) = sum_m U^2(k_m) psi(k_m) / [sum_m U^2(k_m)]^2
// k_m = k + 2 pi m N / L over aliases |m_i| <= 1 (U^2 falls as m^-6: |m| = 2 would change G by
// < 1e-4 of itself); D = k without its Nyquist components; U the TSC
// window, whose alias sum per axis is 1 - s^2 + 2 s^4 / 15, s = sin(pi n_i / N). Both include
// the 1/V of the inverse transform.
void MeshSolver::Impl::buildInfluenceFunctions() {
  const double volume = side * side * side;
  const double k_unit = 2.0 * kPi / side;
  const std::size_t count = fourierCount();
  green_force.assign(count, 0.0);
  green_potential.assign(count, 0.0);
  forEachMode([&](std::size_t e, const std::array<int, 3>& idx) {
    if (idx[0] == 0 && idx[1] == 0 && idx[2] == 0) return;  // the mean density does not pull
    double alias_sum = 1.0;
    std::array<double, 3> d{};
    for (int ax = 0; ax < 3; ++ax) {
      const double s = std::sin(kPi * idx[ax] / n), s2 = s * s;
      alias_sum *= 1.0 - s2 + 2.0 * s2 * s2 / 15.0;
      d[ax] = derivativeWavenumber(idx[ax]);
    }
    // Per-axis alias wavenumbers and window weights.
    std::array<std::array<double, 3>, 3> km{}, um{};
    for (int ax = 0; ax < 3; ++ax)
      for (int m = -1; m <= 1; ++m) {
        const double nm = idx[ax] + static_cast<double>(m) * n;
        km[ax][m + 1] = k_unit * nm;
        um[ax][m + 1] = tscWindowSquared(kPi * nm / n);
      }
    double force_sum = 0.0, potential_sum = 0.0;
    for (int mx = 0; mx < 3; ++mx)
      for (int my = 0; my < 3; ++my)
        for (int mz = 0; mz < 3; ++mz) {
          const double u2 = um[0][mx] * um[1][my] * um[2][mz];
          const double k2 = km[0][mx] * km[0][mx] + km[1][my] * km[1][my] + km[2][mz] * km[2][mz];
          const double shape = s2Shape(std::sqrt(k2) * 0.5 * r_cut);
          const double psi = 4.0 * kPi * shape * shape / k2;
          potential_sum += u2 * psi;
          force_sum += u2 * psi * (d[0] * km[0][mx] + d[1] * km[1][my] + d[2] * km[2][mz]);
        }
    const double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    green_potential[e] = potential_sum / (alias_sum * alias_sum) / volume;
    green_force[e] = d2 > 0.0 ? force_sum / (d2 * alias_sum * alias_sum) / volume : 0.0;
  });
  green_side = side;
  green_r_cut = r_cut;
}

void MeshSolver::Impl::assign(std::span<const Vec3d> pos, std::span<const double> charge) {
  const std::size_t points = static_cast<std::size_t>(n) * n * n;
  density.assign(points, 0.0);
  const double inv_h = n / side;
  const auto count = static_cast<std::ptrdiff_t>(pos.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t p = 0; p < count; ++p) {
    const TscStencil s = tscStencil(pos[p], low, inv_h, n);
    for (int i = 0; i < 3; ++i) {
      const std::size_t ix = static_cast<std::size_t>(wrapIndex(s.first[0] + i, n));
      for (int j = 0; j < 3; ++j) {
        const std::size_t iy = static_cast<std::size_t>(wrapIndex(s.first[1] + j, n));
        const double wxy = charge[p] * s.w[0][i] * s.w[1][j];
        for (int k = 0; k < 3; ++k) {
          const std::size_t iz = static_cast<std::size_t>(wrapIndex(s.first[2] + k, n));
#pragma omp atomic
          density[(ix * n + iy) * n + iz] += wxy * s.w[2][k];
        }
      }
    }
  }
}

// Fourier-space products, then the four backward transforms and the gathers of their slabs.
// Acceleration a(k) = i D G_force rho(k) (gravity's sign: towards mass); potential -G_pot rho(k).
void MeshSolver::Impl::multiplyAndTransformBack() {
  const auto* rho = reinterpret_cast<const std::complex<double>*>(spectrum.get());
  std::array<std::complex<double>*, 4> out{};
  for (int f = 0; f < 4; ++f) out[f] = reinterpret_cast<std::complex<double>*>(work[f].get());
  forEachMode([&](std::size_t e, const std::array<int, 3>& idx) {
    const std::complex<double> i_g_rho = std::complex<double>(0.0, green_force[e]) * rho[e];
    for (int ax = 0; ax < 3; ++ax) out[ax][e] = derivativeWavenumber(idx[ax]) * i_g_rho;
    out[3][e] = -green_potential[e] * rho[e];
  });
  const std::size_t points = static_cast<std::size_t>(n) * n * n;
  for (int f = 0; f < 4; ++f) {
    fft.backward(work[f].get());
    field[f].resize(points);
    fft.gatherSlabs(work[f].get(), field[f]);
  }
}

MeshSolver::MeshSolver(int mesh_size, const void* native_comm)
    : impl_(std::make_unique<Impl>(mesh_size, native_comm)) {
  impl_->spectrum = impl_->fft.allocate();
  for (auto& w : impl_->work) w = impl_->fft.allocate();
}

MeshSolver::~MeshSolver() = default;

int MeshSolver::meshSize() const { return impl_->n; }

void MeshSolver::solve(const Vec3d& low, double side, double r_cut, std::span<const Vec3d> pos,
                       std::span<const double> charge) {
  Impl& s = *impl_;
  s.low = low;
  s.side = side;
  s.r_cut = r_cut;
  if (s.green_side != side || s.green_r_cut != r_cut) s.buildInfluenceFunctions();
  s.assign(pos, charge);
  std::fill_n(s.spectrum.get(), s.fft.bufferDoubles(), 0.0);
  s.fft.reduceToSlab(s.density, s.spectrum.get());
  s.fft.forward(s.spectrum.get());
  s.multiplyAndTransformBack();
}

Vec3d MeshSolver::force(const Vec3d& pos) const {
  const Impl& s = *impl_;
  const TscStencil st = tscStencil(pos, s.low, s.n / s.side, s.n);
  Vec3d acc{0.0, 0.0, 0.0};
  for (int i = 0; i < 3; ++i) {
    const std::size_t ix = static_cast<std::size_t>(wrapIndex(st.first[0] + i, s.n));
    for (int j = 0; j < 3; ++j) {
      const std::size_t iy = static_cast<std::size_t>(wrapIndex(st.first[1] + j, s.n));
      for (int k = 0; k < 3; ++k) {
        const std::size_t iz = static_cast<std::size_t>(wrapIndex(st.first[2] + k, s.n));
        const std::size_t m = (ix * s.n + iy) * s.n + iz;
        const double w = st.w[0][i] * st.w[1][j] * st.w[2][k];
        acc += Vec3d(s.field[0][m], s.field[1][m], s.field[2][m]) * w;
      }
    }
  }
  return acc;
}

double MeshSolver::potential(const Vec3d& pos) const {
  const Impl& s = *impl_;
  const TscStencil st = tscStencil(pos, s.low, s.n / s.side, s.n);
  double phi = 0.0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t ix = static_cast<std::size_t>(wrapIndex(st.first[0] + i, s.n));
    for (int j = 0; j < 3; ++j) {
      const std::size_t iy = static_cast<std::size_t>(wrapIndex(st.first[1] + j, s.n));
      for (int k = 0; k < 3; ++k) {
        const std::size_t iz = static_cast<std::size_t>(wrapIndex(st.first[2] + k, s.n));
        phi += st.w[0][i] * st.w[1][j] * st.w[2][k] * s.field[3][(ix * s.n + iy) * s.n + iz];
      }
    }
  }
  return phi;
}

}  // namespace grove::pm
