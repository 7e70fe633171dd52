// An FDPS 7.1 N-body + SPH style program: dark matter and gas live in two particle systems and
// meet in one gravity tree through the split-stage calls (setParticleLocalTree twice, then
// calcForceMakingTree, or makeLocalTree / makeGlobalTree / calcMomentGlobalTree / calcForce),
// the trees are named with FDPS's generic TreeForForce<SEARCH_MODE_*, ...> spelling, and the
// program reads FDPS's statistics (interaction and walk counts, time profiles, memory), finds
// particles with getEpjFromId, gathers everything with AllGatherParticle for a direct-summation
// reference, and times itself with PS::Timer. Exits non-zero on every rank if a check fails.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>
#include <particle_simulator.hpp>

const PS::F64 EPS2 = 1e-4;

class FPDark {
public:
    PS::S64 id;
    PS::F64 mass;
    PS::F64vec pos, acc;
    PS::F64 pot;
    PS::F64vec getPos() const { return pos; }
    void setPos(const PS::F64vec & p) { pos = p; }
    template <class Tforce>
    void copyFromForce(const Tforce & f) { acc = f.acc; pot = f.pot; }
};

class FPGas {
public:
    PS::S64 id;
    PS::F64 mass, h;
    PS::F64vec pos, acc;
    PS::F64 pot;
    PS::F64vec getPos() const { return pos; }
    void setPos(const PS::F64vec & p) { pos = p; }
    PS::F64 getRSearch() const { return h; }
};

class ForceGrav {
public:
    PS::F64vec acc;
    PS::F64 pot;
    void clear() { acc = 0.0; pot = 0.0; }
};

class EPGrav {
public:
    PS::S64 id;
    PS::F64 mass;
    PS::F64vec pos;
    PS::F64vec getPos() const { return pos; }
    PS::F64 getCharge() const { return mass; }
    void copyFromFP(const FPDark & fp) { id = fp.id; mass = fp.mass; pos = fp.pos; }
    void copyFromFP(const FPGas & fp) { id = fp.id; mass = fp.mass; pos = fp.pos; }
};

struct CalcGravity {
    template <class Tj>
    void operator()(const EPGrav * ep_i, const PS::S32 n_i, const Tj * ep_j, const PS::S32 n_j,
                    ForceGrav * force) const {
        for (PS::S32 i = 0; i < n_i; i++) {
            for (PS::S32 j = 0; j < n_j; j++) {
                const PS::F64vec dr = ep_i[i].getPos() - ep_j[j].getPos();
                const PS::F64 r2 = dr * dr + EPS2;
                const PS::F64 rinv = 1.0 / std::sqrt(r2);
                force[i].acc -= ep_j[j].getCharge() * rinv * rinv * rinv * dr;
                force[i].pot -= ep_j[j].getCharge() * rinv;
            }
        }
    }
};

// Gas neighbours (gather search).
class EPHydro {
public:
    PS::S64 id;
    PS::F64vec pos;
    PS::F64 h;
    PS::F64vec getPos() const { return pos; }
    PS::F64 getRSearch() const { return h; }
    PS::S64 getId() const { return id; }
    void copyFromFP(const FPGas & fp) { id = fp.id; pos = fp.pos; h = fp.h; }
};
class ForceCount {
public:
    PS::S32 n_ngb;
    void clear() { n_ngb = 0; }
};
struct CountNeighbours {
    void operator()(const EPHydro * ep_i, const PS::S32 n_i, const EPHydro * ep_j, const PS::S32 n_j,
                    ForceCount * force) const {
        for (PS::S32 i = 0; i < n_i; i++)
            for (PS::S32 j = 0; j < n_j; j++) {
                const PS::F64vec dr = ep_i[i].pos - ep_j[j].pos;
                if (dr * dr < ep_i[i].h * ep_i[i].h) force[i].n_ngb++;
            }
    }
};

static PS::S32 n_fail = 0;
static void check(const bool ok, const char * what) {
    if (!ok) {
        n_fail++;
        fprintf(stderr, "rank %d: FAILED: %s\n", PS::Comm::getRank(), what);
    }
}

// A particle as the direct-summation reference sees it.
struct Source {
    PS::S64 id;
    PS::F64 mass;
    PS::F64vec pos;
};

int main(int argc, char * argv[]) {
    PS::Initialize(argc, argv);
    PS::MemoryPool::initialize(1 << 20);
    const PS::S32 my_rank = PS::Comm::getRank();
    const PS::S32 n_proc = PS::Comm::getNumberOfProc();
    PS::Timer timer;
    timer.reset();
    timer.start();

    // Dark matter in a sphere, gas in a smaller one, made on rank 0.
    PS::ParticleSystem<FPDark> dark;
    PS::ParticleSystem<FPGas> gas;
    dark.initialize();
    gas.initialize();
    const PS::S32 n_dark = 1500, n_gas = 700;
    if (my_rank == 0) {
        PS::MTTS mt;
        mt.init_genrand(11);
        dark.setNumberOfParticleLocal(n_dark);
        gas.setNumberOfParticleLocal(n_gas);
        for (PS::S32 i = 0; i < n_dark; i++) {
            dark[i].id = i;
            dark[i].mass = 0.8 / n_dark;
            do {
                dark[i].pos = PS::F64vec(2 * mt.genrand_res53() - 1, 2 * mt.genrand_res53() - 1, 2 * mt.genrand_res53() - 1);
            } while (dark[i].pos * dark[i].pos > 1.0);
        }
        for (PS::S32 i = 0; i < n_gas; i++) {
            gas[i].id = n_dark + i;
            gas[i].mass = 0.2 / n_gas;
            gas[i].h = 0.2;
            do {
                gas[i].pos = PS::F64vec(mt.genrand_res53() - 0.5, mt.genrand_res53() - 0.5, mt.genrand_res53() - 0.5);
            } while (gas[i].pos * gas[i].pos > 0.25);
        }
    } else {
        dark.setNumberOfParticleLocal(0);
        gas.setNumberOfParticleLocal(0);
    }
    PS::DomainInfo dinfo;
    dinfo.initialize();
    dinfo.collectSampleParticle(dark, true, 1.0);
    dinfo.collectSampleParticle(gas, false, 1.0);
    dinfo.decomposeDomain();
    dark.exchangeParticle(dinfo);
    gas.exchangeParticle(dinfo);
    timer.restart("decomposition and exchange");
    check(dark.getNumberOfParticleGlobal() == n_dark && gas.getNumberOfParticleGlobal() == n_gas, "exchange keeps both systems");

    // ---- gravity of both systems in one tree, FDPS's generic spelling, theta = 0 ---------------------
    typedef PS::TreeForForce<PS::SEARCH_MODE_LONG, ForceGrav, EPGrav, EPGrav, PS::MomentMonopole, PS::MomentMonopole,
                             PS::SPJMonopole> TreeGrav;
    TreeGrav tree_grav;
    tree_grav.initialize(3 * (n_dark + n_gas), 0.0, 8, 32);
    tree_grav.setParticleLocalTree(dark);
    tree_grav.setParticleLocalTree(gas, false);
    tree_grav.clearCounterAll();
    tree_grav.calcForceMakingTree(CalcGravity(), CalcGravity(), dinfo);
    const PS::S32 nd = dark.getNumberOfParticleLocal(), ng = gas.getNumberOfParticleLocal();
    for (PS::S32 i = 0; i < nd; i++) { dark[i].acc = tree_grav.getForce(i).acc; dark[i].pot = tree_grav.getForce(i).pot; }
    for (PS::S32 i = 0; i < ng; i++) { gas[i].acc = tree_grav.getForce(nd + i).acc; gas[i].pot = tree_grav.getForce(nd + i).pot; }
    timer.restart("gravity");

    // Direct summation over every rank's particles of both kinds (AllGatherParticle).
    std::vector<Source> mine;
    for (PS::S32 i = 0; i < nd; i++) mine.push_back({dark[i].id, dark[i].mass, dark[i].pos});
    for (PS::S32 i = 0; i < ng; i++) mine.push_back({gas[i].id, gas[i].mass, gas[i].pos});
    Source * all = nullptr;
    PS::S32 n_all = 0;
    PS::AllGatherParticle(all, n_all, mine.data(), (PS::S32)mine.size());
    check(n_all == n_dark + n_gas, "AllGatherParticle gathers every particle");
    PS::F64 err_max = 0.0;
    for (PS::S32 k = 0; k < (PS::S32)mine.size(); k++) {
        PS::F64vec acc = 0.0;
        for (PS::S32 j = 0; j < n_all; j++) {
            const PS::F64vec dr = mine[k].pos - all[j].pos;
            const PS::F64 r2 = dr * dr + EPS2;
            acc -= all[j].mass / (r2 * std::sqrt(r2)) * dr;
        }
        const PS::F64vec got = k < nd ? dark[k].acc : gas[k - nd].acc;
        const PS::F64vec d = got - acc;
        err_max = std::max(err_max, std::sqrt((d * d) / (acc * acc)));
    }
    delete[] all;
    err_max = PS::Comm::getMaxValue(err_max);
    check(err_max < 1e-12, "theta = 0: two systems in one tree give direct summation");
    if (my_rank == 0) std::printf("split-stage gravity, theta 0: max relative error %.3e\n", err_max);

    // ---- statistics: interactions add up until cleared, as in FDPS ---------------------------------------
    const PS::S64 n_ep_ep = tree_grav.getNumberOfInteractionEPEPLocal();
    const PS::S64 n_walk = tree_grav.getNumberOfWalkLocal();
    check(n_ep_ep == (PS::S64)(nd + ng) * (n_dark + n_gas), "theta = 0: every pair counted once");
    check(n_walk > 0 || nd + ng == 0, "walks counted");
    check(tree_grav.getNumberOfWalkGlobal() == PS::Comm::getSum(n_walk), "getNumberOfWalkGlobal sums the ranks");
    // The same steps one at a time give bitwise the same forces, and the counts add up.
    tree_grav.makeLocalTree(dinfo);
    tree_grav.makeGlobalTree(dinfo);
    tree_grav.calcMomentGlobalTree();
    tree_grav.calcForce(CalcGravity(), CalcGravity());
    bool same = true;
    for (PS::S32 i = 0; i < nd; i++) same = same && tree_grav.getForce(i).acc == dark[i].acc;
    for (PS::S32 i = 0; i < ng; i++) same = same && tree_grav.getForce(nd + i).acc == gas[i].acc;
    check(same, "makeLocalTree / makeGlobalTree / calcMomentGlobalTree / calcForce = calcForceMakingTree");
    check(tree_grav.getNumberOfInteractionEPEPLocal() == 2 * n_ep_ep, "interaction counts add up over calls");
    check(tree_grav.getNumberOfInteractionEPEPGlobal() == PS::Comm::getSum(2 * n_ep_ep), "global interaction count");
    const PS::TimeProfile t_grav = tree_grav.getTimeProfile();
    check(t_grav.getTotalTime() > 0.0 && t_grav.calc_force > 0.0, "tree time profile accumulates");
    tree_grav.clearCounterAll();
    check(tree_grav.getNumberOfInteractionEPEPLocal() == 0 && tree_grav.getTimeProfile().getTotalTime() == 0.0,
          "clearCounterAll clears counts and times");
    check(tree_grav.getMemSizeUsed() > 0 && dark.getMemSizeUsed() > 0 && dinfo.getMemSizeUsed() > 0 &&
              gas.getUsedMemorySize() == gas.getMemSizeUsed(),
          "memory queries");
    check(dinfo.getTimeProfile().decompose_domain > 0.0, "DomainInfo time profile");
    check(dark.getTimeProfile().exchange_particle > 0.0, "ParticleSystem time profile");

    // A fixed root cell (makeLocalTree(l, c)) changes nothing at theta = 0.
    tree_grav.makeLocalTree(4.0f, PS::F32vec(0.0f));
    tree_grav.makeGlobalTree(dinfo);
    tree_grav.calcForce(CalcGravity(), CalcGravity());
    PS::F64 diff = 0.0;
    for (PS::S32 i = 0; i < nd; i++) {
        const PS::F64vec d = tree_grav.getForce(i).acc - dark[i].acc;
        diff = std::max(diff, std::sqrt(d * d / (dark[i].acc * dark[i].acc)));
    }
    check(PS::Comm::getMaxValue(diff) < 1e-12, "makeLocalTree(l, c)");

    // calcForceAndWriteBack: the trees made from one system, written back to it.
    PS::TreeForForceLong<ForceGrav, EPGrav, EPGrav>::Monopole tree_dark;
    tree_dark.initialize(3 * n_dark, 0.0);
    tree_dark.setParticleLocalTree(dark);
    tree_dark.calcForceMakingTree(CalcGravity(), CalcGravity(), dinfo);
    for (PS::S32 i = 0; i < nd; i++) dark[i].acc = 0.0;
    tree_dark.calcForceAndWriteBack(CalcGravity(), CalcGravity(), dark);
    bool written = true;
    for (PS::S32 i = 0; i < nd; i++) written = written && dark[i].acc == tree_dark.getForce(i).acc && dark[i].acc * dark[i].acc > 0.0;
    check(written, "calcForceAndWriteBack writes the forces of the trees made last");
    timer.restart("statistics");

    // ---- gas neighbours: generic spelling of a Gather tree, getEpjFromId ------------------------------------
    typedef PS::TreeForForce<PS::SEARCH_MODE_GATHER, ForceCount, EPHydro, EPHydro, PS::MomentSearchInAndOut,
                             PS::MomentSearchInAndOut, PS::SuperParticleBase> TreeNgb;
    TreeNgb tree_ngb;
    tree_ngb.initialize(3 * n_gas);
    tree_ngb.setParticleLocalTree(gas);
    tree_ngb.calcForceMakingTree(CountNeighbours(), dinfo);
    bool found_all = true;
    PS::S64 n_ngb = 0;
    for (PS::S32 i = 0; i < ng; i++) {
        const EPHydro * p = tree_ngb.getEpjFromId(gas[i].id);
        found_all = found_all && p != nullptr && p->pos == gas[i].pos;
        n_ngb += tree_ngb.getForce(i).n_ngb;
    }
    check(found_all, "getEpjFromId finds every local gas particle");
    check(tree_ngb.getEpjFromId(-1) == nullptr, "getEpjFromId of an unknown id is null");
    // Brute-force neighbour count of this rank's gas.
    Source * gas_all = nullptr;
    PS::S32 n_gas_all = 0;
    std::vector<Source> gas_mine;
    for (PS::S32 i = 0; i < ng; i++) gas_mine.push_back({gas[i].id, gas[i].h, gas[i].pos});
    PS::AllGatherParticle(gas_all, n_gas_all, gas_mine.data(), ng);
    PS::S64 n_ngb_ref = 0;
    for (PS::S32 i = 0; i < ng; i++)
        for (PS::S32 j = 0; j < n_gas_all; j++) {
            const PS::F64vec dr = gas[i].pos - gas_all[j].pos;
            if (dr * dr < gas[i].h * gas[i].h) n_ngb_ref++;
        }
    delete[] gas_all;
    check(n_ngb == n_ngb_ref, "split-stage Gather tree: brute-force neighbour counts");
    timer.stop("neighbours");

    // ---- small utilities ----------------------------------------------------------------------------------
    PS::ReallocatableArray<PS::F64vec> list;
    list.reserve(4);
    for (PS::S32 i = 0; i < 10; i++) list.push_back(PS::F64vec(i));
    list.resizeNoInitialize(12);
    check(list.size() == 12 && list[9] == PS::F64vec(9.0) && list.getPointer(3)->x == 3.0, "ReallocatableArray");
    std::ostringstream timing;
    timer.dump(timing);
    check(timing.str().find("neighbours") != std::string::npos, "Timer::dump names the splits");
    if (my_rank == 0) std::printf("%s", timing.str().c_str());

    if (n_fail > 0) fprintf(stderr, "rank %d: %d checks failed\n", my_rank, n_fail);
    const bool all_ok = PS::Comm::synchronizeConditionalBranchAND(n_fail == 0);
    if (my_rank == 0 && all_ok) std::printf("fdps_split_stage_program: all checks passed on %d ranks\n", n_proc);
    PS::Finalize();
    return all_ok ? 0 : 1;
}
