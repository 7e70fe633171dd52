// An FDPS 7.1 program, written as an FDPS user writes one (after FDPS's sample/c++/nbody): it
// must compile unchanged against grove's particle_simulator.hpp and run at any rank count.
// It makes a cold uniform sphere on rank 0, decomposes and exchanges, checks what FDPS
// promises, writes snapshots (one file; one file per rank; binary) and reads them back, and
// exits non-zero on every rank if anything differs.
#include <iostream>
#include <fstream>
#include <particle_simulator.hpp>

class FileHeader {
public:
    PS::S64 n_body;
    PS::F64 time;
    PS::S32 readAscii(FILE * fp) {
        fscanf(fp, "%la\n", &time);
        fscanf(fp, "%lld\n", &n_body);
        return n_body;
    }
    void writeAscii(FILE * fp) const {
        fprintf(fp, "%a\n", time);
        fprintf(fp, "%lld\n", n_body);
    }
};

class FPGrav {
public:
    PS::S64    id;
    PS::F64    mass;
    PS::F64vec pos;
    PS::F64vec vel;
    PS::F64vec acc;
    PS::F64    pot;

    PS::F64vec getPos() const {
        return pos;
    }
    void setPos(const PS::F64vec & p) {
        pos = p;
    }
    PS::F64 getCharge() const {
        return mass;
    }
    void copyFromFP(const FPGrav & fp) {
        mass = fp.mass;
        pos  = fp.pos;
    }
    void copyFromForce(const FPGrav & force) {
        acc = force.acc;
        pot = force.pot;
    }
    void clear() {
        acc = 0.0;
        pot = 0.0;
    }
    // %a keeps every bit of a double through the text file.
    void writeAscii(FILE * fp) const {
        fprintf(fp, "%lld\t%a\t%a\t%a\t%a\t%a\t%a\t%a\n",
                this->id, this->mass,
                this->pos.x, this->pos.y, this->pos.z,
                this->vel.x, this->vel.y, this->vel.z);
    }
    void readAscii(FILE * fp) {
        fscanf(fp, "%lld\t%la\t%la\t%la\t%la\t%la\t%la\t%la\n",
               &this->id, &this->mass,
               &this->pos.x, &this->pos.y, &this->pos.z,
               &this->vel.x, &this->vel.y, &this->vel.z);
    }
    void writeBinary(FILE * fp) const {
        fwrite(this, sizeof(FPGrav), 1, fp);
    }
    void readBinary(FILE * fp) {
        fread(this, sizeof(FPGrav), 1, fp);
    }
};

// A force kernel in FDPS's form (sample/c++/nbody's CalcGravity).
template <class TParticleJ>
void CalcGravity(const FPGrav * ep_i,
                 const PS::S32 n_ip,
                 const TParticleJ * ep_j,
                 const PS::S32 n_jp,
                 FPGrav * force) {
    const PS::F64 eps2 = 1.0 / 1024.0;
    for (PS::S32 i = 0; i < n_ip; i++) {
        PS::F64vec xi = ep_i[i].getPos();
        PS::F64vec ai = 0.0;
        PS::F64 poti = 0.0;
        for (PS::S32 j = 0; j < n_jp; j++) {
            PS::F64vec rij    = xi - ep_j[j].getPos();
            PS::F64    r3_inv = rij * rij + eps2;
            PS::F64    r_inv  = 1.0 / sqrt(r3_inv);
            r3_inv  = r_inv * r_inv;
            r_inv  *= ep_j[j].getCharge();
            r3_inv *= r_inv;
            ai     -= r3_inv * rij;
            poti   -= r_inv;
        }
        force[i].acc += ai;
        force[i].pot += poti;
    }
}

static PS::S32 n_fail = 0;

static void check(const bool ok, const char * what) {
    if (!ok) {
        n_fail++;
        fprintf(stderr, "rank %d: FAILED: %s\n", PS::Comm::getRank(), what);
    }
}

void makeColdUniformSphere(const PS::F64 mass_glb,
                           const PS::S64 n_glb,
                           const PS::S64 n_loc,
                           PS::F64 *& mass,
                           PS::F64vec *& pos,
                           PS::F64vec *& vel) {
    PS::MTTS mt;
    mt.init_genrand(0);
    for (PS::S32 i = 0; i < n_loc; i++) {
        mass[i] = mass_glb / n_glb;
        const PS::F64 radius = 3.0;
        do {
            pos[i][0] = (2. * mt.genrand_res53() - 1.) * radius;
            pos[i][1] = (2. * mt.genrand_res53() - 1.) * radius;
            pos[i][2] = (2. * mt.genrand_res53() - 1.) * radius;
        } while (pos[i] * pos[i] >= radius * radius);
        vel[i][0] = 0.1 * (mt.genrand_res53() - 0.5);
        vel[i][1] = 0.1 * (mt.genrand_res53() - 0.5);
        vel[i][2] = 0.1 * (mt.genrand_res53() - 0.5);
    }
    PS::F64vec cm_pos  = 0.0;
    PS::F64vec cm_vel  = 0.0;
    PS::F64    cm_mass = 0.0;
    for (PS::S32 i = 0; i < n_loc; i++) {
        cm_pos  += mass[i] * pos[i];
        cm_vel  += mass[i] * vel[i];
        cm_mass += mass[i];
    }
    cm_pos /= cm_mass;
    cm_vel /= cm_mass;
    for (PS::S32 i = 0; i < n_loc; i++) {
        pos[i] -= cm_pos;
        vel[i] -= cm_vel;
    }
}

template <class Tpsys>
void setParticlesColdUniformSphere(Tpsys & psys, const PS::S32 n_glb, PS::S32 & n_loc) {
    n_loc = n_glb;
    psys.setNumberOfParticleLocal(n_loc);
    PS::F64    * mass = new PS::F64[n_loc];
    PS::F64vec * pos  = new PS::F64vec[n_loc];
    PS::F64vec * vel  = new PS::F64vec[n_loc];
    makeColdUniformSphere(1.0, n_glb, n_loc, mass, pos, vel);
    for (PS::S32 i = 0; i < n_loc; i++) {
        psys[i].mass = mass[i];
        psys[i].pos  = pos[i];
        psys[i].vel  = vel[i];
        psys[i].id   = i;
        psys[i].clear();
    }
    delete [] mass;
    delete [] pos;
    delete [] vel;
}

// Every particle of every rank on rank 0, sorted by id (empty elsewhere).
template <class Tpsys>
std::vector<FPGrav> gatherSortedById(const Tpsys & psys) {
    const PS::S32 n_proc = PS::Comm::getNumberOfProc();
    PS::S32 n_loc = psys.getNumberOfParticleLocal();
    std::vector<PS::S32> n_recv(n_proc), n_disp(n_proc + 1, 0);
    PS::Comm::gather(&n_loc, 1, n_recv.data());
    for (PS::S32 i = 0; i < n_proc; i++) n_disp[i + 1] = n_disp[i] + n_recv[i];
    std::vector<FPGrav> all(PS::Comm::getRank() == 0 ? n_disp[n_proc] : 0);
    std::vector<FPGrav> mine(n_loc);
    for (PS::S32 i = 0; i < n_loc; i++) mine[i] = psys[i];
    PS::Comm::gatherV(mine.data(), n_loc, all.data(), n_recv.data(), n_disp.data());
    std::sort(all.begin(), all.end(), [](const FPGrav & a, const FPGrav & b) { return a.id < b.id; });
    return all;
}

bool samePayload(const FPGrav & a, const FPGrav & b) {
    return a.id == b.id && a.mass == b.mass && a.pos == b.pos && a.vel == b.vel;
}

bool sameParticlesOnRank0(const std::vector<FPGrav> & a, const std::vector<FPGrav> & b) {
    if (PS::Comm::getRank() != 0) return true;
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++) {
        if (!samePayload(a[i], b[i])) return false;
    }
    return true;
}

int main(int argc, char * argv[]) {
    PS::Initialize(argc, argv);
    const PS::S32 n_tot = 1000;
    const PS::S32 my_rank = PS::Comm::getRank();
    const PS::S32 n_proc = PS::Comm::getNumberOfProc();
    if (my_rank == 0) {
        fprintf(stdout, "FDPS-style program: %d processes, %d threads per process\n",
                n_proc, PS::Comm::getNumberOfThread());
    }

    // ---- random numbers as in FDPS's reference Mersenne twister
    {
        PS::MTTS mt;
        mt.init_genrand(5489);
        check(mt.genrand_int32() == 3499211612UL, "MTTS first output for seed 5489");
    }

    // ---- initial condition on rank 0, then decomposition and exchange
    PS::ParticleSystem<FPGrav> system_grav;
    system_grav.initialize();
    PS::S32 n_loc = 0;
    if (my_rank == 0) {
        setParticlesColdUniformSphere(system_grav, n_tot, n_loc);
    } else {
        system_grav.setNumberOfParticleLocal(n_loc);
    }
    const std::vector<FPGrav> initial = gatherSortedById(system_grav);

    const PS::F32 coef_ema = 0.3;
    PS::DomainInfo dinfo;
    dinfo.initialize(coef_ema);
    dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_OPEN);
    dinfo.decomposeDomainAll(system_grav);
    system_grav.exchangeParticle(dinfo);
    n_loc = system_grav.getNumberOfParticleLocal();

    check(system_grav.getNumberOfParticleGlobal() == n_tot, "getNumberOfParticleGlobal after exchange");
    check(PS::Comm::getSum(n_loc) == n_tot, "Comm::getSum of local counts");
    PS::F64ort my_domain = dinfo.getPosDomain(my_rank);
    bool all_inside = true;
    for (PS::S32 i = 0; i < n_loc; i++) {
        if (!my_domain.overlapped(system_grav[i].getPos())) all_inside = false;
    }
    check(PS::Comm::synchronizeConditionalBranchAND(all_inside), "every particle inside its rank's domain");
    check(sameParticlesOnRank0(initial, gatherSortedById(system_grav)), "exchange keeps every particle");

    // Conserved sums, as an FDPS user checks them.
    PS::F64    mass_loc = 0.0;
    PS::F64vec mom_loc  = 0.0;
    PS::S64    id_loc   = 0;
    for (PS::S32 i = 0; i < n_loc; i++) {
        mass_loc += system_grav[i].mass;
        mom_loc  += system_grav[i].mass * system_grav[i].vel;
        id_loc   += system_grav[i].id;
    }
    const PS::F64    mass_glb = PS::Comm::getSum(mass_loc);
    const PS::F64vec mom_glb  = PS::Comm::getSum(mom_loc);
    check(std::fabs(mass_glb - 1.0) < 1e-12, "total mass");
    check(std::sqrt(mom_glb * mom_glb) < 1e-12, "total momentum");
    check(PS::Comm::getSum(id_loc) == (PS::S64)n_tot * (n_tot - 1) / 2, "sum of ids");

    // The rank holding the particle farthest from the centre.
    PS::F64 r2_max_loc = -1.0;
    for (PS::S32 i = 0; i < n_loc; i++) {
        const PS::F64 r2 = system_grav[i].pos * system_grav[i].pos;
        if (r2 > r2_max_loc) r2_max_loc = r2;
    }
    PS::F64 r2_max;
    PS::S32 rank_max;
    PS::Comm::getMaxValue(r2_max_loc, my_rank, r2_max, rank_max);
    check(r2_max == PS::Comm::getMaxValue(r2_max_loc), "getMaxValue with rank: value");
    PS::S32 holder = (r2_max_loc == r2_max) ? my_rank : n_proc;
    check(rank_max == PS::Comm::getMinValue(holder), "getMaxValue with rank: rank");
    PS::F64 r2_bcast = r2_max_loc;
    PS::Comm::broadcast(&r2_bcast, 1, rank_max);
    check(r2_bcast == r2_max, "broadcast from the rank found");

    // ---- direct-summation forces on rank 0 (the kernel idioms: F64vec ai = 0.0, rij * rij, ...)
    if (my_rank == 0) {
        std::vector<FPGrav> all = initial;
        for (size_t i = 0; i < all.size(); i++) all[i].clear();
        CalcGravity(all.data(), (PS::S32)all.size(), all.data(), (PS::S32)all.size(), all.data());
        PS::F64vec f_sum = 0.0;
        PS::F64 e_pot = 0.0;
        for (size_t i = 0; i < all.size(); i++) {
            f_sum += all[i].mass * all[i].acc;
            e_pot += 0.5 * all[i].mass * all[i].pot;
        }
        check(sqrt(f_sum * f_sum) < 1e-12 && e_pot < 0.0, "direct-summation kernel: forces cancel");
    }

    // ---- snapshot: one file, header on every rank, particles handed out in file order
    char filename[256];
    sprintf(filename, "fdps_program_np%d.dat", n_proc);
    FileHeader header;
    header.time   = 0.125;
    header.n_body = system_grav.getNumberOfParticleGlobal();
    system_grav.writeParticleAscii(filename, header);

    PS::ParticleSystem<FPGrav> system_read;
    system_read.initialize();
    FileHeader header_read;
    system_read.readParticleAscii(filename, header_read);
    check(header_read.n_body == n_tot && header_read.time == 0.125, "header read back on every rank");
    const PS::S32 n_expected = n_tot / n_proc + (my_rank == 0 ? n_tot % n_proc : 0);
    check(system_read.getNumberOfParticleLocal() == n_expected, "particles handed out as FDPS does");
    check(sameParticlesOnRank0(initial, gatherSortedById(system_read)), "ascii snapshot round trip");

    // ---- one file per rank (each header counts its own file's particles): each rank gets its
    //      own particles back, in order
    header.n_body = n_loc;
    system_grav.writeParticleAscii(filename, "%s_%03d_%03d", header);
    PS::ParticleSystem<FPGrav> system_mine;
    system_mine.initialize();
    system_mine.readParticleAscii(filename, "%s_%03d_%03d", header_read);
    bool same_order = system_mine.getNumberOfParticleLocal() == n_loc;
    for (PS::S32 i = 0; same_order && i < n_loc; i++) {
        same_order = samePayload(system_mine[i], system_grav[i]);
    }
    check(PS::Comm::synchronizeConditionalBranchAND(same_order), "one file per rank round trip");

    // ---- binary, no header: the count comes from the file size
    char filename_bin[256];
    sprintf(filename_bin, "fdps_program_np%d.bin", n_proc);
    system_grav.writeParticleBinary(filename_bin);
    PS::ParticleSystem<FPGrav> system_bin;
    system_bin.initialize();
    system_bin.readParticleBinary(filename_bin);
    check(system_bin.getNumberOfParticleGlobal() == n_tot, "binary particle count");
    check(sameParticlesOnRank0(initial, gatherSortedById(system_bin)), "binary snapshot round trip");

    // ---- remove the particles with x < 0, add one back on rank 0
    std::vector<PS::S32> idx_remove;
    PS::S32 n_neg_loc = 0;
    for (PS::S32 i = 0; i < n_loc; i++) {
        if (system_grav[i].pos.x < 0.0) {
            idx_remove.push_back(i);
            n_neg_loc++;
        }
    }
    system_grav.removeParticle(idx_remove.data(), (PS::S32)idx_remove.size());
    bool none_negative = system_grav.getNumberOfParticleLocal() == n_loc - n_neg_loc;
    for (PS::S32 i = 0; i < system_grav.getNumberOfParticleLocal(); i++) {
        if (system_grav[i].pos.x < 0.0) none_negative = false;
    }
    check(PS::Comm::synchronizeConditionalBranchAND(none_negative), "removeParticle");
    if (my_rank == 0) {
        FPGrav extra = initial[0];
        extra.id = n_tot;
        system_grav.addOneParticle(extra);
    }
    check(system_grav.getNumberOfParticleGlobal() == n_tot - PS::Comm::getSum(n_neg_loc) + 1, "addOneParticle");

    PS::Comm::barrier();
    if (my_rank == 0) {
        remove(filename);
        remove(filename_bin);
    }
    char own_file[300];
    sprintf(own_file, "%s_%03d_%03d", filename, n_proc, my_rank);
    remove(own_file);

    const PS::S32 n_fail_glb = PS::Comm::getSum(n_fail);
    if (my_rank == 0) {
        if (n_fail_glb == 0) {
            fprintf(stdout, "FDPS-style program: all checks passed\n");
        } else {
            fprintf(stdout, "FDPS-style program: %d checks FAILED\n", n_fail_glb);
        }
    }
    PS::Finalize();
    return n_fail_glb == 0 ? 0 : 1;
}
