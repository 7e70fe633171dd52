// The particle-mesh FFT over MPI: FFTW-MPI's slab decomposition. Each rank owns a slab of
// x-planes in real space and, after the transposed-out forward transform, a slab of y-wavenumber
// planes in Fourier space; the backward transform (transposed in) returns x-slabs. Only this file
// and mesh transfers below touch MPI inside grove_pm.
#include <fftw3-mpi.h>
#include <mpi.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "slab_fft.hpp"

namespace grove::pm::detail {

struct SlabFft::Impl {
  int n = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  ptrdiff_t alloc_complex = 0;
  ptrdiff_t x_start = 0, x_count = 0, k_start = 0, k_count = 0;
  std::vector<int> slab_counts;         // per rank: x_count * N * N mesh points
  std::vector<int> slab_displacements;  // per rank: x_start * N * N
  fftw_plan forward = nullptr;
  fftw_plan backward = nullptr;

  ~Impl() {
    // FDPS programs declare the mesh in main and call PS::Finalize() before it goes out of
    // scope. After MPI_Finalize nothing may be freed: an FFTW-MPI plan frees the communicator it
    // holds when destroyed (MPI aborts the run for it), so the plans are left to the process's end.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (forward) fftw_destroy_plan(forward);
    if (backward) fftw_destroy_plan(backward);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

SlabFft::SlabFft(int mesh_size, const void* native_comm) : impl_(std::make_unique<Impl>()) {
  static std::once_flag fftw_mpi_ready;
  std::call_once(fftw_mpi_ready, [] { fftw_mpi_init(); });
  Impl& s = *impl_;
  s.n = mesh_size;
  // A communicator of our own: the plans keep it, and the caller's may be freed before them.
  MPI_Comm_dup(native_comm ? *static_cast<const MPI_Comm*>(native_comm) : MPI_COMM_WORLD, &s.comm);
  MPI_Comm_rank(s.comm, &s.rank);
  const ptrdiff_t n = mesh_size;
  s.alloc_complex = fftw_mpi_local_size_3d_transposed(n, n, n / 2 + 1, s.comm, &s.x_count, &s.x_start,
                                                      &s.k_count, &s.k_start);
  int ranks = 1;
  MPI_Comm_size(s.comm, &ranks);
  const int mine[2] = {static_cast<int>(s.x_count), static_cast<int>(s.x_start)};
  std::vector<int> all(2 * static_cast<std::size_t>(ranks));
  MPI_Allgather(mine, 2, MPI_INT, all.data(), 2, MPI_INT, s.comm);
  for (int r = 0; r < ranks; ++r) {
    s.slab_counts.push_back(all[2 * r] * mesh_size * mesh_size);
    s.slab_displacements.push_back(all[2 * r + 1] * mesh_size * mesh_size);
  }
  // FFTW_ESTIMATE plans without writing to the buffer, and the plans are used on other buffers of
  // the same alignment (fftw_malloc) through the new-array execute calls.
  Buffer probe = allocate();
  auto* c = reinterpret_cast<fftw_complex*>(probe.get());
  s.forward = fftw_mpi_plan_dft_r2c_3d(n, n, n, probe.get(), c, s.comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  s.backward = fftw_mpi_plan_dft_c2r_3d(n, n, n, c, probe.get(), s.comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
  if (!s.forward || !s.backward)
    throw std::runtime_error("FFTW-MPI could not plan a " + std::to_string(mesh_size) + "^3 transform");
}

SlabFft::~SlabFft() = default;

int SlabFft::meshSize() const { return impl_->n; }
int SlabFft::rank() const { return impl_->rank; }
std::ptrdiff_t SlabFft::xStart() const { return impl_->x_start; }
std::ptrdiff_t SlabFft::xCount() const { return impl_->x_count; }
std::ptrdiff_t SlabFft::kFirstStart() const { return impl_->k_start; }
std::ptrdiff_t SlabFft::kFirstCount() const { return impl_->k_count; }
bool SlabFft::transposed() const { return true; }
std::size_t SlabFft::bufferDoubles() const { return 2 * static_cast<std::size_t>(std::max<ptrdiff_t>(impl_->alloc_complex, 1)); }

void SlabFft::FreeBuffer::operator()(double* p) const noexcept { fftw_free(p); }

SlabFft::Buffer SlabFft::allocate() const {
  Buffer b(fftw_alloc_real(bufferDoubles()));
  if (!b) throw std::runtime_error("FFTW could not allocate a mesh slab");
  std::fill_n(b.get(), bufferDoubles(), 0.0);
  return b;
}

// Mass to the slabs: every rank has assigned its particles to a full-size mesh; one
// reduce-scatter sums those meshes and hands each rank only its own x-planes of the sum.
void SlabFft::reduceToSlab(std::span<const double> full_mesh, double* slab) const {
  const Impl& s = *impl_;
  const std::size_t n = static_cast<std::size_t>(s.n), padded = 2 * (n / 2 + 1);
  std::vector<double> mine(static_cast<std::size_t>(s.x_count) * n * n);
  MPI_Reduce_scatter(full_mesh.data(), mine.data(), s.slab_counts.data(), MPI_DOUBLE, MPI_SUM, s.comm);
  for (std::size_t row = 0; row < static_cast<std::size_t>(s.x_count) * n; ++row)
    std::copy_n(mine.data() + row * n, n, slab + row * padded);
}

// Forces back: every rank's x-planes of a field are all-gathered, so each rank can interpolate
// at any of its particles (and at any position a user asks for) from a full copy.
void SlabFft::gatherSlabs(const double* slab, std::span<float> full_mesh) const {
  const Impl& s = *impl_;
  const std::size_t n = static_cast<std::size_t>(s.n), padded = 2 * (n / 2 + 1);
  std::vector<float> mine(static_cast<std::size_t>(s.x_count) * n * n);
  for (std::size_t row = 0; row < static_cast<std::size_t>(s.x_count) * n; ++row)
    std::copy_n(slab + row * padded, n, mine.data() + row * n);
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, full_mesh.data(), s.slab_counts.data(),
                 s.slab_displacements.data(), MPI_FLOAT, s.comm);
}

void SlabFft::forward(double* buffer) const {
  fftw_mpi_execute_dft_r2c(impl_->forward, buffer, reinterpret_cast<fftw_complex*>(buffer));
}

void SlabFft::backward(double* buffer) const {
  fftw_mpi_execute_dft_c2r(impl_->backward, reinterpret_cast<fftw_complex*>(buffer), buffer);
}

}  // namespace grove::pm::detail
