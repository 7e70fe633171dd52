// A STREAM-like probe of the host's memory bandwidth (McCalpin's triad, a[i] = b[i] + s c[i], over
// arrays far larger than the caches), for the scaling runs: how much bandwidth one rank's
// threads get, and how much several ranks sharing the host get together. Run it alone, or as
// many copies at once as the scaling run has ranks (mpirun -np 4 --bind-to none), each with the
// threads a rank has; each copy prints one JSON line, and the copies' rates add up to what the
// host gives them together.
//
//   g++ -O3 -march=native -fopenmp tools/stream_probe.cpp -o stream_probe
//   OMP_NUM_THREADS=16 ./stream_probe [--mib 1024] [--repeat 10]
//   mpirun -np 4 --bind-to none -x OMP_NUM_THREADS=16 ./stream_probe
//
// Bytes counted as STREAM does: the triad reads b and c and writes a (3 arrays per pass; the
// write-allocate read of a is not counted). The best of the repeats is reported, with the median.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  std::size_t mib = 1024;
  int repeat = 10;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--mib") == 0) mib = std::strtoull(argv[a + 1], nullptr, 10);
    else if (std::strcmp(argv[a], "--repeat") == 0) repeat = std::atoi(argv[a + 1]);
  }
  if (mib == 0 || repeat < 1) {
    std::fprintf(stderr, "stream_probe: --mib and --repeat must be positive\n");
    return 2;
  }
  const std::size_t n = mib * (std::size_t{1} << 20) / sizeof(double);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  // First touch by the threads that will use each page (NUMA placement as in the run).
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  const double s = 3.0;
  std::vector<double> gbs;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gbs.push_back(3.0 * static_cast<double>(n * sizeof(double)) / seconds * 1e-9);
  }
  // Use the result, so the loop is not optimised away.
  double check = 0.0;
  for (std::size_t i = 0; i < n; i += n / 16 + 1) check += a[i];
  std::vector<double> sorted = gbs;
  std::sort(sorted.begin(), sorted.end());
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  std::printf("{\"probe\":\"stream_triad\",\"rank\":%s,\"threads\":%d,\"mib_per_array\":%zu,\"best_gb_per_s\":%.2f,"
              "\"median_gb_per_s\":%.2f,\"check\":%.1f}\n",
              rank ? rank : "0", omp_get_max_threads(), mib, sorted.back(), sorted[sorted.size() / 2], check);
  return 0;
}
