#pragma once
// A reference short-range force engine for the SPH tests, with the trees' calling convention:
// every particle's kernel call sees all particles of all ranks and their periodic images within
// half a box of the root domain, a superset of any interaction list a tree would build.
#include <array>
#include <vector>

#include "grove/domain/domain_info.hpp"

namespace sph::testing {

template <class Force, class EPI, class EPJ>
class BruteForceShortRange {
 public:
  template <class Kernel, class PSys>
  void calcForceAllAndWriteBack(const Kernel& kernel, PSys& psys, const grove::DomainInfo& dinfo) {
    const auto all = psys.comm().allgatherv(psys.particles());
    const std::vector<EPJ> epj = imagesOf(all, dinfo);
    std::vector<EPI> epi(psys.size());
    std::vector<Force> force(psys.size());
    for (std::size_t i = 0; i < psys.size(); ++i) {
      epi[i].copyFromFP(psys[i]);
      force[i].clear();
    }
    constexpr int kGroup = 32;
    const int n = static_cast<int>(psys.size());
#pragma omp parallel for schedule(dynamic)
    for (int begin = 0; begin < n; begin += kGroup)
      kernel(epi.data() + begin, std::min(kGroup, n - begin), epj.data(), static_cast<int>(epj.size()),
             force.data() + begin);
    for (std::size_t i = 0; i < psys.size(); ++i) psys[i].copyFromForce(force[i]);
  }

 private:
  template <class FP>
  static std::vector<EPJ> imagesOf(const std::vector<FP>& all, const grove::DomainInfo& dinfo) {
    const grove::Boxd root = dinfo.getPosRootDomain();
    std::array<double, 3> period{}, margin{};
    for (std::size_t a = 0; a < 3; ++a) {
      const bool periodic = grove::isPeriodic(dinfo.getBoundaryCondition(), static_cast<int>(a));
      period[a] = periodic ? root.high[a] - root.low[a] : 0.0;
      margin[a] = 0.5 * period[a];
    }
    std::vector<EPJ> out;
    for (int sx = -1; sx <= 1; ++sx)
      for (int sy = -1; sy <= 1; ++sy)
        for (int sz = -1; sz <= 1; ++sz) {
          const grove::Vec3d shift{sx * period[0], sy * period[1], sz * period[2]};
          if ((sx && !period[0]) || (sy && !period[1]) || (sz && !period[2])) continue;
          for (const auto& p : all) {
            const grove::Vec3d pos = p.pos + shift;
            bool near = true;
            for (std::size_t a = 0; a < 3; ++a)
              near = near && (period[a] == 0.0 || (pos[a] >= root.low[a] - margin[a] && pos[a] < root.high[a] + margin[a]));
            if (!near) continue;
            EPJ e;
            e.copyFromFP(p);
            e.setPos(pos);
            out.push_back(e);
          }
        }
    return out;
  }
};

}  // namespace sph::testing
