#pragma once
// A distributed real-to-complex 3D FFT over an N^3 periodic mesh, slab-decomposed along x, and
// the two mesh transfers the particle-mesh solver needs around it. Private to grove_pm; two
// implementations: slab_fft_mpi.cpp (FFTW-MPI) and slab_fft_serial.cpp (FFTW, one rank).
//
// Real space: this rank holds x-planes [x_start, x_start + x_count) of the mesh, stored in FFTW's
// padded in-place layout real[(x - x_start) * N * P + y * P + z], P = 2 (N/2 + 1).
// Fourier space: this rank holds k_first_count planes of the first stored index, starting at
// k_first_start; element [a][b][c] of a plane set is complex[(a * N + b) * (N/2 + 1) + c]. With
// `transposed` (FFTW-MPI's TRANSPOSED_OUT) a is the y wavenumber and b the x one; otherwise a is
// x, b is y. c is always z (0 .. N/2).
#include <complex>
#include <cstddef>
#include <memory>
#include <span>

namespace grove::pm::detail {

class SlabFft {
 public:
  // native_comm: pointer to the MPI_Comm to use (copied; null means MPI_COMM_WORLD); ignored in
  // the serial build.
  SlabFft(int mesh_size, const void* native_comm);
  ~SlabFft();
  SlabFft(const SlabFft&) = delete;
  SlabFft& operator=(const SlabFft&) = delete;

  int meshSize() const;
  int rank() const;
  std::ptrdiff_t xStart() const;
  std::ptrdiff_t xCount() const;
  std::ptrdiff_t kFirstStart() const;
  std::ptrdiff_t kFirstCount() const;
  bool transposed() const;
  // Elements (doubles) in one padded real-space buffer; the complex view holds half as many.
  std::size_t bufferDoubles() const;

  // Collective. Sums every rank's full N^3 mesh (x-major, unpadded) and leaves this rank's
  // x-slab of the sum in `slab` (padded layout).
  void reduceToSlab(std::span<const double> full_mesh, double* slab) const;
  // Collective. Every rank's x-slab (padded layout) of one field, assembled on every rank into a
  // full N^3 mesh (x-major, unpadded).
  void gatherSlabs(const double* slab, std::span<float> full_mesh) const;

  // In place: buffer holds a real slab, then its transform. Collective.
  void forward(double* buffer) const;
  // In place: buffer holds a spectrum, then the real field (unnormalised, FFTW's backward).
  // Collective. Destroys nothing else.
  void backward(double* buffer) const;

  // A buffer of bufferDoubles() doubles, aligned as FFTW wants, zero-filled.
  struct FreeBuffer {
    void operator()(double* p) const noexcept;
  };
  using Buffer = std::unique_ptr<double[], FreeBuffer>;
  Buffer allocate() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove::pm::detail
