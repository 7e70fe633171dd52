// The particle-mesh FFT in a build without MPI (GROVE_MPI=OFF): plain FFTW on the whole mesh,
// which is then the one slab; the mesh transfers are copies.
#include <fftw3.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "slab_fft.hpp"

namespace grove::pm::detail {

struct SlabFft::Impl {
  int n = 0;
  fftw_plan forward = nullptr;
  fftw_plan backward = nullptr;
  ~Impl() {
    if (forward) fftw_destroy_plan(forward);
    if (backward) fftw_destroy_plan(backward);
  }
};

SlabFft::SlabFft(int mesh_size, const void*) : impl_(std::make_unique<Impl>()) {
  impl_->n = mesh_size;
  Buffer probe = allocate();
  auto* c = reinterpret_cast<fftw_complex*>(probe.get());
  impl_->forward = fftw_plan_dft_r2c_3d(mesh_size, mesh_size, mesh_size, probe.get(), c, FFTW_ESTIMATE);
  impl_->backward = fftw_plan_dft_c2r_3d(mesh_size, mesh_size, mesh_size, c, probe.get(), FFTW_ESTIMATE);
  if (!impl_->forward || !impl_->backward)
    throw std::runtime_error("FFTW could not plan a " + std::to_string(mesh_size) + "^3 transform");
}

SlabFft::~SlabFft() = default;

int SlabFft::meshSize() const { return impl_->n; }
int SlabFft::rank() const { return 0; }
std::ptrdiff_t SlabFft::xStart() const { return 0; }
std::ptrdiff_t SlabFft::xCount() const { return impl_->n; }
std::ptrdiff_t SlabFft::kFirstStart() const { return 0; }
std::ptrdiff_t SlabFft::kFirstCount() const { return impl_->n; }
bool SlabFft::transposed() const { return false; }
std::size_t SlabFft::bufferDoubles() const {
  const std::size_t n = static_cast<std::size_t>(impl_->n);
  return n * n * 2 * (n / 2 + 1);
}

void SlabFft::FreeBuffer::operator()(double* p) const noexcept { fftw_free(p); }

SlabFft::Buffer SlabFft::allocate() const {
  Buffer b(fftw_alloc_real(bufferDoubles()));
  if (!b) throw std::runtime_error("FFTW could not allocate the mesh");
  std::fill_n(b.get(), bufferDoubles(), 0.0);
  return b;
}

void SlabFft::reduceToSlab(std::span<const double> full_mesh, double* slab) const {
  const std::size_t n = static_cast<std::size_t>(impl_->n), padded = 2 * (n / 2 + 1);
  for (std::size_t row = 0; row < n * n; ++row) std::copy_n(full_mesh.data() + row * n, n, slab + row * padded);
}

void SlabFft::gatherSlabs(const double* slab, std::span<float> full_mesh) const {
  const std::size_t n = static_cast<std::size_t>(impl_->n), padded = 2 * (n / 2 + 1);
  for (std::size_t row = 0; row < n * n; ++row)
    std::copy_n(slab + row * padded, n, full_mesh.data() + row * n);
}

void SlabFft::forward(double* buffer) const {
  fftw_execute_dft_r2c(impl_->forward, buffer, reinterpret_cast<fftw_complex*>(buffer));
}

void SlabFft::backward(double* buffer) const {
  fftw_execute_dft_c2r(impl_->backward, reinterpret_cast<fftw_complex*>(buffer), buffer);
}

}  // namespace grove::pm::detail
