#pragma once
// A stand-in accelerator for the multiwalk tests of the long-range tree modes: dispatch computes
// each batch at once with the CPU kernels into per-tag buffers, retrieve adds them to the forces
// (Force::add). The index form is written as FDPS's samples write it: the send call hands over
// the whole arrays, each later call computes its walks from them.
#include <functional>
#include <map>
#include <vector>

namespace grove::testing_support {

template <class EPI, class EPJ, class SPJ, class Force, class EpKernel, class SpKernel>
struct HostAccelerator {
  std::map<int, std::vector<std::vector<Force>>> results;  // tag -> walk -> forces
  const EPJ* epj_all = nullptr;
  const SPJ* spj_all = nullptr;

  void compute(int tag, int n_walk, const int* n_epi, const std::function<void(int, Force*)>& kernels) {
    auto& r = results[tag];
    r.assign(static_cast<std::size_t>(n_walk), {});
    for (int w = 0; w < n_walk; ++w) {
      r[static_cast<std::size_t>(w)].assign(static_cast<std::size_t>(n_epi[w]), Force{});
      kernels(w, r[static_cast<std::size_t>(w)].data());
    }
  }

  struct PlainDispatch {
    HostAccelerator* device;
    int operator()(int tag, int n_walk, const EPI** epi, const int* n_epi, const EPJ** epj, const int* n_epj,
                   const SPJ** spj, const int* n_spj) const {
      device->compute(tag, n_walk, n_epi, [&](int w, Force* out) {
        EpKernel{}(epi[w], n_epi[w], epj[w], n_epj[w], out);
        SpKernel{}(epi[w], n_epi[w], spj[w], n_spj[w], out);
      });
      return 0;
    }
  };

  struct IndexDispatch {
    HostAccelerator* device;
    int operator()(int tag, int n_walk, const EPI** epi, const int* n_epi, const int** id_epj, const int* n_epj,
                   const int** id_spj, const int* n_spj, const EPJ* epj, int, const SPJ* spj, int,
                   bool send_flag) const {
      if (send_flag) device->epj_all = epj, device->spj_all = spj;
      if (n_walk == 0) return 0;
      device->compute(tag, n_walk, n_epi, [&](int w, Force* out) {
        std::vector<EPJ> ep(static_cast<std::size_t>(n_epj[w]));
        std::vector<SPJ> sp(static_cast<std::size_t>(n_spj[w]));
        for (int k = 0; k < n_epj[w]; ++k) ep[static_cast<std::size_t>(k)] = device->epj_all[id_epj[w][k]];
        for (int k = 0; k < n_spj[w]; ++k) sp[static_cast<std::size_t>(k)] = device->spj_all[id_spj[w][k]];
        EpKernel{}(epi[w], n_epi[w], ep.data(), n_epj[w], out);
        SpKernel{}(epi[w], n_epi[w], sp.data(), n_spj[w], out);
      });
      return 0;
    }
  };

  struct Retrieve {
    HostAccelerator* device;
    int operator()(int tag, int n_walk, const int* n_epi, Force** force) const {
      auto& r = device->results.at(tag);
      for (int w = 0; w < n_walk; ++w)
        for (int i = 0; i < n_epi[w]; ++i) force[w][i].add(r[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)]);
      device->results.erase(tag);
      return 0;
    }
  };
};

}  // namespace grove::testing_support
