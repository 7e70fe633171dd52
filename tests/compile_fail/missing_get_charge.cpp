// Must NOT compile: the EPJ lacks getCharge (long-range trees need it).
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"

struct Force {
  double acc = 0;
  void clear() { acc = 0; }
};
struct FullParticle {
  grove::Vec3d pos;
  grove::Vec3d getPos() const { return pos; }
  void copyFromForce(const Force&) {}
};
struct Essential {  // no getCharge
  grove::Vec3d pos;
  grove::Vec3d getPos() const { return pos; }
  void copyFromFP(const FullParticle& p) { pos = p.pos; }
};

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  grove::ParticleSystem<FullParticle> psys;
  grove::DomainInfo dinfo;
  grove::TreeForForceLong<Force, Essential, Essential>::Monopole tree(0, 0.5, 8, 64);
  auto kernel = [](const Essential*, int, const auto*, int, Force*) {};
  tree.calcForceAllAndWriteBack(kernel, kernel, psys, dinfo);
}
