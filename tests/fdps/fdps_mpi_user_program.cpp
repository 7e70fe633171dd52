// An FDPS 7.1 program that talks MPI itself, as FDPS's planetary-ring, water and TreePM programs
// do: built with PARTICLE_SIMULATOR_MPI_PARALLEL, it calls MPI_Allreduce with PS::GetDataType,
// the C++ bindings where the MPI library has them, and PS::Comm::getCommunicator(); it sets the
// domain grid and a periodic root domain axis by axis (setDomain, setPosRootDomainX/Y/Z), mixes
// single and double precision vectors as FDPS allows, and adds its own types and functions to
// namespace ParticleSimulator. It exits non-zero on every rank if any check fails.
#include <cmath>
#include <cstdio>
#include <type_traits>
#include <particle_simulator.hpp>

// User additions to FDPS's namespace, as FDPS programs make them.
namespace ParticleSimulator {
    typedef Vector3<F32> Float3;
    inline F64 distanceSquared(const F64vec & a, const F64vec & b) {
        const F64vec d = a - b;
        return d * d;
    }
    struct RingParameter {
        F64 r_in, r_out;
    };
}

class FP {
public:
    PS::S64 id;
    PS::F64vec pos;
    PS::F32vec vel;   // single precision, as ring codes keep velocities
    PS::F64 mass;
    PS::F64vec getPos() const { return pos; }
    void setPos(const PS::F64vec & p) { pos = p; }
};

static PS::S32 n_fail = 0;
static void check(const bool ok, const char * what) {
    if (!ok) {
        n_fail++;
        fprintf(stderr, "rank %d: FAILED: %s\n", PS::Comm::getRank(), what);
    }
}

int main(int argc, char * argv[]) {
    PS::Initialize(argc, argv);
    const PS::S32 my_rank = PS::Comm::getRank();
    const PS::S32 n_proc = PS::Comm::getNumberOfProc();

    // ---- 1. MPI from user code --------------------------------------------------------------
    MPI_Comm comm = PS::Comm::getCommunicator();
    int mpi_rank = -1, mpi_size = -1;
    MPI_Comm_rank(comm, &mpi_rank);
    MPI_Comm_size(comm, &mpi_size);
    check(mpi_rank == my_rank && mpi_size == n_proc, "getCommunicator: rank and size agree with PS::Comm");
    PS::F64 x_loc = 0.5 * (my_rank + 1), x_sum = 0.0;
    MPI_Allreduce(&x_loc, &x_sum, 1, PS::GetDataType<PS::F64>(), MPI_SUM, MPI_COMM_WORLD);
    check(x_sum == 0.25 * n_proc * (n_proc + 1), "MPI_Allreduce with GetDataType<F64>");
    PS::S64 n_loc64 = my_rank, n_sum64 = 0;
    MPI_Allreduce(&n_loc64, &n_sum64, 1, PS::GetDataType(n_loc64), MPI_SUM, comm);
    check(n_sum64 == (PS::S64)n_proc * (n_proc - 1) / 2, "MPI_Allreduce with GetDataType(S64 value)");
    // A user struct travels as bytes.
    PS::RingParameter param_send = {1.0 + my_rank, 2.0 + my_rank};
    std::vector<PS::RingParameter> params(n_proc);
    MPI_Allgather(&param_send, 1, PS::GetDataType<PS::RingParameter>(), params.data(), 1,
                  PS::GetDataType<PS::RingParameter>(), comm);
    bool params_ok = true;
    for (PS::S32 r = 0; r < n_proc; r++) params_ok = params_ok && params[r].r_in == 1.0 + r && params[r].r_out == 2.0 + r;
    check(params_ok, "MPI_Allgather of a user struct with GetDataType<T>");
    // Vectors too (FDPS programs reduce F64vecs this way).
    PS::F64vec v_loc(1.0, my_rank, -2.0), v_sum(0.0);
    MPI_Allreduce(&v_loc, &v_sum, 3, PS::GetDataType<PS::F64>(), MPI_SUM, comm);
    check(v_sum == PS::F64vec(n_proc, 0.5 * n_proc * (n_proc - 1), -2.0 * n_proc), "MPI_Allreduce of an F64vec");
    // MPI_MAXLOC with FDPS's pair type: the largest value and the rank holding it.
    struct { PS::F64 value; int rank; } loc_in = {1.0 + (my_rank == n_proc - 1 ? 10.0 : my_rank), my_rank}, loc_out;
    MPI_Allreduce(&loc_in, &loc_out, 1, PS::GetDataType<PS::F64, PS::S32>(), MPI_MAXLOC, comm);
    check(loc_out.rank == n_proc - 1 && loc_out.value == 11.0, "MPI_MAXLOC with GetDataType<F64, S32>");
    PS::MpiRequest request;
    PS::S32 token = my_rank, token_back = -1;
    MPI_Irecv(&token_back, 1, PS::GetDataType<PS::S32>(), my_rank, 7, comm, &request);
    MPI_Send(&token, 1, PS::GetDataType<PS::S32>(), my_rank, 7, comm);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check(token_back == my_rank, "PS::MpiRequest with MPI_Irecv");
    // FDPS's small type helpers.
    check(PS::SEARCH_MODE_LONG::search_type_id == PS::LONG_NO_CUTOFF &&
              std::is_same<PS::SEARCH_MODE_GATHER::force_type, PS::TagForceShort>::value &&
              std::is_same<PS::Count_t, PS::U64>::value && std::is_same<PS::FSPvec, PS::F64vec>::value &&
              PS::N_CHILDREN == 8,
          "search-mode tags, Count_t, FSPvec, N_CHILDREN");
#if defined(OMPI_BUILD_CXX_BINDINGS) && OMPI_BUILD_CXX_BINDINGS
    // The MPI-2 C++ bindings that older FDPS programs use, where the library provides them.
    check(MPI::COMM_WORLD.Get_rank() == my_rank, "MPI::COMM_WORLD.Get_rank()");
    PS::F64 y_sum = 0.0;
    MPI::COMM_WORLD.Allreduce(&x_loc, &y_sum, 1, MPI::DOUBLE, MPI::SUM);
    check(y_sum == x_sum, "MPI::COMM_WORLD.Allreduce");
#endif

    // ---- 4. vectors: FDPS's conversions and mixed precision -------------------------------------
    const PS::F64vec a64(1.0 / 3.0, -2.5, 1e-3);
    PS::F32vec a32 = a64;             // narrowing by construction, as FDPS allows
    PS::F32vec b32(a64);
    PS::F32vec c32;
    c32 = a64;                        // and by assignment
    check(a32.x == (PS::F32)(1.0 / 3.0) && b32 == a32 && c32 == a32, "F64vec -> F32vec by construction and assignment");
    PS::F32vec d32(1.0f, 1.0f, 1.0f);
    d32 -= a64;                       // F32vec -= F64vec
    d32 += a64 * 2.0;
    check(std::fabs(d32.x - (PS::F32)(1.0 + 1.0 / 3.0)) < 1e-6f, "F32vec -= F64vec, += F64vec");
    const PS::F32vec e32 = a32 + a64; // the left operand's precision, as FDPS's member operators
    const PS::F64vec e64 = a64 - a32;
    const PS::F32 dot32 = a32 * a64;
    const PS::F64vec cross64 = a64 ^ a32;
    check(std::fabs(e32.y + 5.0f) < 1e-6f && std::fabs(e64.x) < 1e-7 && std::fabs(dot32 - (PS::F32)(a64 * a64)) < 1e-4f &&
              cross64 * cross64 < 1e-12,
          "mixed-precision +, -, * and ^ take the left operand's type");
    const PS::Float3 user_type = a64;
    check(user_type == a32, "a user typedef of Vector3<F32> in namespace ParticleSimulator");
    check(PS::distanceSquared(a64, PS::F64vec(0.0)) == a64 * a64, "a user function in namespace ParticleSimulator");

    // ---- 2. DomainInfo setters: grid and root domain axis by axis ---------------------------------
    PS::ParticleSystem<FP> system;
    system.initialize();
    const PS::S64 n_glb = 2000;
    if (my_rank == 0) {
        system.setNumberOfParticleLocal(n_glb);
        PS::MTTS mt;
        mt.init_genrand(7);
        for (PS::S64 i = 0; i < n_glb; i++) {
            system[i].id = i;
            system[i].mass = 1.0 / n_glb;
            system[i].pos = PS::F64vec(4.0 * mt.genrand_res53() - 2.0, 2.0 * mt.genrand_res53(),
                                       6.0 * mt.genrand_res53() - 1.0);
            system[i].vel = system[i].pos * 0.1;   // F64vec * F64 -> F32vec
        }
    } else {
        system.setNumberOfParticleLocal(0);
    }
    PS::DomainInfo dinfo;
    dinfo.initialize();
    // A grid with every rank along z (FDPS's setDomain), nz defaulting to 1 in the two-argument form.
    dinfo.setDomain(1, 1, n_proc);
    dinfo.setBoundaryCondition(PS::BOUNDARY_CONDITION_PERIODIC_XYZ);
    dinfo.setPosRootDomainX(-2.0, 2.0);
    dinfo.setPosRootDomainY(0.0, 2.0);
    dinfo.setPosRootDomainZ(-1.0, 5.0);
    const PS::F64ort root = dinfo.getPosRootDomain();
    check(root.low_ == PS::F64vec(-2.0, 0.0, -1.0) && root.high_ == PS::F64vec(2.0, 2.0, 5.0),
          "setPosRootDomainX/Y/Z set the periodic box axis by axis");
    dinfo.decomposeDomainAll(system);
    system.exchangeParticle(dinfo);
    check(system.getNumberOfParticleGlobal() == n_glb, "every particle kept by the exchange");
    // Every domain spans the whole box in x and y: the grid was 1 x 1 x n_proc.
    const PS::F64ort mine = dinfo.getPosDomain(my_rank);
    check(mine.low_.x == -2.0 && mine.high_.x == 2.0 && mine.low_.y == 0.0 && mine.high_.y == 2.0,
          "setDomain(1, 1, n): domains cut along z only");
    bool inside = true;
    for (PS::S32 i = 0; i < system.getNumberOfParticleLocal(); i++) inside = inside && mine.contained(system[i].pos);
    check(PS::Comm::synchronizeConditionalBranchAND(inside), "every particle inside its domain (F64ort::contained)");
    if (n_proc == 1) {
        PS::DomainInfo two_axes;
        two_axes.initialize();
        two_axes.setDomain(1, 1);
        check(two_axes.getNumberOfDomainMultiDimension()[2] == 1, "setDomain(nx, ny): nz = 1");
    }

    // ---- CommInfo: FDPS's communicator objects, and domains on a part of the ranks ------------------
    MPI_Comm halves;
    MPI_Comm_split(MPI_COMM_WORLD, my_rank % 2, my_rank, &halves);
    PS::CommInfo half_info(halves);
    const PS::S32 half_size = (n_proc + 1 - my_rank % 2) / 2;
    check(half_info.getNumberOfProc() == half_size && half_info.getRank() == my_rank / 2,
          "CommInfo over an MPI_Comm_split communicator");
    check(half_info.getSum(1) == half_size, "CommInfo::getSum over its ranks only");
    PS::F64 f_max;
    PS::S32 at;
    half_info.getMaxValue((PS::F64)my_rank, my_rank, f_max, at);
    check(at == (my_rank % 2 == 0 ? (n_proc - 1) / 2 * 2 : n_proc / 2 * 2 - 1) && f_max == at, "CommInfo MAXLOC");
    const PS::CommInfo split_info = PS::CommInfo(MPI_COMM_WORLD).split(my_rank % 2, -my_rank);
    check(split_info.getNumberOfProc() == half_size && split_info.getRank() == half_size - 1 - my_rank / 2,
          "CommInfo::split with descending keys");
    const int first_rank[1] = {0};
    const PS::CommInfo only_first = PS::CommInfo(MPI_COMM_WORLD).create(1, first_rank);
    check(only_first.isNull() == (my_rank != 0), "CommInfo::create: only the listed ranks belong");
    if (my_rank == 0) check(only_first.getNumberOfProc() == 1, "CommInfo::create: its size");
    int compare = MPI_UNEQUAL;
    MPI_Comm_compare(half_info.getCommunicator(), halves, &compare);
    check(compare == MPI_IDENT, "CommInfo::getCommunicator gives the communicator back");
    // Each half decomposes and exchanges its own particles.
    PS::ParticleSystem<FP> half_system;
    half_system.setCommInfo(half_info);
    half_system.initialize();
    const PS::S32 n_mine = 100 * (my_rank + 1);
    half_system.setNumberOfParticleLocal(n_mine);
    for (PS::S32 i = 0; i < n_mine; i++) {
        half_system[i].id = i;
        half_system[i].mass = 1.0;
        half_system[i].pos = PS::F64vec(0.001 * i, 0.5 * (my_rank % 3), 0.25);
    }
    PS::DomainInfo half_dinfo;
    half_dinfo.setCommInfo(half_info);
    half_dinfo.initialize();
    half_dinfo.decomposeDomainAll(half_system);
    half_system.exchangeParticle(half_dinfo);
    const PS::S64 half_total = half_info.getSum((PS::S64)n_mine);
    check(half_system.getNumberOfParticleGlobal() == half_total && half_total == half_info.getSum((PS::S64)half_system.getNumberOfParticleLocal()),
          "domains and exchange within a CommInfo's ranks keep its particles");
    MPI_Comm_free(&halves);

    if (n_fail > 0) fprintf(stderr, "rank %d: %d checks failed\n", my_rank, n_fail);
    const bool all_ok = PS::Comm::synchronizeConditionalBranchAND(n_fail == 0);
    if (my_rank == 0 && all_ok) std::printf("fdps_mpi_user_program: all checks passed on %d ranks\n", n_proc);
    PS::Finalize();
    return all_ok ? 0 : 1;
}
