// Must NOT compile: the full particle lacks copyFromForce. The test expects exactly one error,
// grove's static_assert naming the FP type and the member.
#include "grove/grove.hpp"
#include "grove/force/tree_for_force_long.hpp"

struct Force {
  double acc = 0;
  void clear() { acc = 0; }
};
struct FullParticle {  // no copyFromForce
  grove::Vec3d pos;
  double mass = 1;
  grove::Vec3d getPos() const { return pos; }
};
struct Essential {
  grove::Vec3d pos;
  double mass = 1;
  grove::Vec3d getPos() const { return pos; }
  double getCharge() const { return mass; }
  void copyFromFP(const FullParticle& p) { pos = p.pos, mass = p.mass; }
};

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  grove::ParticleSystem<FullParticle> psys;
  grove::DomainInfo dinfo;
  grove::TreeForForceLong<Force, Essential, Essential>::Monopole tree(0, 0.5, 8, 64);
  auto kernel = [](const Essential*, int, const auto*, int, Force*) {};
  tree.calcForceAllAndWriteBack(kernel, kernel, psys, dinfo);
}
