// An N-body program written for FDPS 7.1's API, as an FDPS user writes one, with a plain fp32
// SIMD kernel (#pragma omp simd). It compiles unchanged against FDPS or, with its include path
// pointing at framework/include/grove, against grove's drop-in particle_simulator.hpp. Cold
// uniform sphere; leapfrog; energy every step; domain decomposition every 4 steps.
//   fdps_style_nbody [N] [theta] [n_leaf] [n_group] [steps]
#include <particle_simulator.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

class ForceGrav {
 public:
  PS::F32vec acc;
  PS::F32 pot;
  void clear() {
    acc = 0.f;
    pot = 0.f;
  }
};

class FPGrav {
 public:
  PS::S64 id;
  PS::F64 mass;
  PS::F64vec pos, vel, acc;
  PS::F64 pot;
  PS::F64vec getPos() const { return pos; }
  void setPos(const PS::F64vec& p) { pos = p; }
  void copyFromForce(const ForceGrav& f) {
    acc = f.acc;
    pot = f.pot;
  }
};

class EPIGrav {
 public:
  PS::F64vec pos;
  PS::F64vec getPos() const { return pos; }
  void copyFromFP(const FPGrav& fp) { pos = fp.pos; }
};

class EPJGrav {
 public:
  PS::F64 mass;
  PS::F64vec pos;
  PS::F64vec getPos() const { return pos; }
  PS::F64 getCharge() const { return mass; }
  void copyFromFP(const FPGrav& fp) {
    mass = fp.mass;
    pos = fp.pos;
  }
};

static PS::F32 eps2_kernel = 1.0f / 1024.0f;

// j-particles are copied to float arrays so that the inner loop vectorises.
template <class TParticleJ>
void CalcGravity(const EPIGrav* ep_i, const PS::S32 n_ip, const TParticleJ* ep_j, const PS::S32 n_jp,
                 ForceGrav* force) {
  static thread_local std::vector<PS::F32> xj, yj, zj, mj;
  xj.resize(n_jp), yj.resize(n_jp), zj.resize(n_jp), mj.resize(n_jp);
  for (PS::S32 j = 0; j < n_jp; j++) {
    xj[j] = ep_j[j].getPos().x;
    yj[j] = ep_j[j].getPos().y;
    zj[j] = ep_j[j].getPos().z;
    mj[j] = ep_j[j].getCharge();
  }
  const PS::F32* x = xj.data();
  const PS::F32* y = yj.data();
  const PS::F32* z = zj.data();
  const PS::F32* m = mj.data();
  const PS::F32 eps2 = eps2_kernel;
  for (PS::S32 i = 0; i < n_ip; i++) {
    const PS::F32 xi = ep_i[i].pos.x, yi = ep_i[i].pos.y, zi = ep_i[i].pos.z;
    PS::F32 ax = 0.f, ay = 0.f, az = 0.f, pot = 0.f;
#pragma omp simd reduction(+ : ax, ay, az, pot)
    for (PS::S32 j = 0; j < n_jp; j++) {
      const PS::F32 dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
      const PS::F32 r2 = dx * dx + dy * dy + dz * dz + eps2;
      const PS::F32 r_inv = 1.0f / std::sqrt(r2);
      const PS::F32 mr_inv = m[j] * r_inv;
      const PS::F32 mr3_inv = mr_inv * r_inv * r_inv;
      ax += mr3_inv * dx;
      ay += mr3_inv * dy;
      az += mr3_inv * dz;
      pot -= mr_inv;
    }
    force[i].acc.x += ax;
    force[i].acc.y += ay;
    force[i].acc.z += az;
    force[i].pot += pot;
  }
}

void makeColdUniformSphere(PS::ParticleSystem<FPGrav>& psys, PS::S64 n_glb) {
  const PS::S32 rank = PS::Comm::getRank(), n_proc = PS::Comm::getNumberOfProc();
  const PS::S64 begin = n_glb * rank / n_proc, end = n_glb * (rank + 1) / n_proc;
  psys.setNumberOfParticleLocal(end - begin);
  PS::MTTS mt;
  mt.init_genrand(rank + 1);
  for (PS::S64 i = 0; i < end - begin; i++) {
    PS::F64vec p;
    do {
      p = PS::F64vec(2.0 * mt.genrand_res53() - 1.0, 2.0 * mt.genrand_res53() - 1.0, 2.0 * mt.genrand_res53() - 1.0);
    } while (p * p >= 1.0);
    psys[i].id = begin + i;
    psys[i].mass = 1.0 / n_glb;
    psys[i].pos = 3.0 * p;
    psys[i].vel = 0.0;
  }
}

PS::F64 totalEnergy(const PS::ParticleSystem<FPGrav>& psys, PS::F64 eps) {
  PS::F64 e = 0.0;
  for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); i++)
    e += 0.5 * psys[i].mass * (psys[i].vel * psys[i].vel) + 0.5 * psys[i].mass * (psys[i].pot + psys[i].mass / eps);
  return PS::Comm::getSum(e);
}

int main(int argc, char* argv[]) {
  PS::Initialize(argc, argv);
  const PS::S64 n_glb = argc > 1 ? std::atoll(argv[1]) : (1 << 18);
  const PS::F32 theta = argc > 2 ? std::atof(argv[2]) : 0.5f;
  const PS::S32 n_leaf_limit = argc > 3 ? std::atoi(argv[3]) : 8;
  const PS::S32 n_group_limit = argc > 4 ? std::atoi(argv[4]) : 256;
  const PS::S32 n_steps = argc > 5 ? std::atoi(argv[5]) : 16;
  const PS::F64 eps = 1.0 / 32.0, dt = 1.0 / 128.0;
  eps2_kernel = eps * eps;

  PS::ParticleSystem<FPGrav> psys;
  psys.initialize();
  makeColdUniformSphere(psys, n_glb);
  PS::DomainInfo dinfo;
  dinfo.initialize();
  dinfo.decomposeDomainAll(psys);
  psys.exchangeParticle(dinfo);
  PS::TreeForForceLong<ForceGrav, EPIGrav, EPJGrav>::Monopole tree;
  tree.initialize(n_glb, theta, n_leaf_limit, n_group_limit);
  tree.calcForceAllAndWriteBack(CalcGravity<EPJGrav>, CalcGravity<PS::SPJMonopole>, psys, dinfo);
  const PS::F64 e0 = totalEnergy(psys, eps);

  PS::F64 time_total = 0.0;
  for (PS::S32 step = 1; step <= n_steps; step++) {
    PS::Comm::barrier();
    const PS::F64 t0 = PS::GetWtime();
    for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); i++) {
      psys[i].vel += 0.5 * dt * psys[i].acc;
      psys[i].pos += dt * psys[i].vel;
    }
    if (step % 4 == 0) dinfo.decomposeDomainAll(psys);
    psys.exchangeParticle(dinfo);
    tree.calcForceAllAndWriteBack(CalcGravity<EPJGrav>, CalcGravity<PS::SPJMonopole>, psys, dinfo);
    for (PS::S32 i = 0; i < psys.getNumberOfParticleLocal(); i++) psys[i].vel += 0.5 * dt * psys[i].acc;
    const PS::F64 e = totalEnergy(psys, eps);
    PS::Comm::barrier();
    const PS::F64 step_time = PS::GetWtime() - t0;
    time_total += step_time;
    if (PS::Comm::getRank() == 0) {
      std::printf("step %d  dE/E %+.3e  %.4f s/step\n", step, (e - e0) / std::fabs(e0), step_time);
#ifdef GROVE_VERSION
      std::printf("  grove stages: %s\n", tree.profile().json().c_str());
#endif
    }
  }
  if (PS::Comm::getRank() == 0)
    std::printf("{\"program\":\"fdps_style_nbody\",\"n\":%lld,\"theta\":%g,\"n_leaf\":%d,\"n_group\":%d,\"procs\":%d,"
                "\"threads\":%d,\"steps\":%d,\"mean_step_s\":%.4f}\n",
                static_cast<long long>(n_glb), theta, n_leaf_limit, n_group_limit, PS::Comm::getNumberOfProc(),
                PS::Comm::getNumberOfThread(), n_steps, time_total / n_steps);
  PS::Finalize();
  return 0;
}
