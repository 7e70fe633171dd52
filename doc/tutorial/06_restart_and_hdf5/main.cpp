// Tutorial 06: restart files and HDF5 snapshots. A run names its state once in a
// grove::io::Checkpoint; stopped after step k and restarted from the newest checkpoint, it reaches
// step 2k with bitwise the particles of the run that never stopped. Snapshots for other tools
// (h5py, yt, ParaView) go through grove::io::writeSnapshot. The program runs the three runs one
// after the other, checks what its page claims, and exits non-zero otherwise.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <tuple>

#include <grove/grove.hpp>
#include <grove/io/checkpoint.hpp>
#include <grove/io/fields.hpp>  // the snapshot field list, also where grove has no HDF5
#if GROVE_HAS_HDF5
#include <grove/io/snapshot.hpp>
#endif

// A star in a harmonic well, heated by random kicks. What a snapshot holds is named once, under
// GADGET-4's names (a restart file holds all of it, as bytes).
struct Star {
  std::int64_t id = 0;
  double mass = 0.0;
  grove::Vec3d pos, vel;

  grove::Vec3d getPos() const { return pos; }
  void setPos(const grove::Vec3d& p) { pos = p; }
  static constexpr auto snapshotFields() {
    return std::tuple{grove::io::field("ParticleIDs", &Star::id), grove::io::field("Masses", &Star::mass),
                      grove::io::field("Coordinates", &Star::pos), grove::io::field("Velocities", &Star::vel)};
  }
};

constexpr std::int64_t kStars = 20000;
constexpr int kHalf = 10;  // the first run stops after kHalf steps, the runs end at 2 * kHalf
constexpr double kDt = 0.05;

// Everything the run carries from one step to the next, and its checkpoint naming all of it.
struct Run {
  grove::ParticleSystem<Star> stars;
  grove::DomainInfo domains;
  std::mt19937_64 kicks;  // each rank its own stream: a per-rank value
  // A distribution has state too (a normal one draws pairs and keeps the second): saved with the
  // stream, or the restarted run would draw other kicks.
  std::normal_distribution<double> kick{0.0, 0.01};
  double time = 0.0;
  std::int64_t step = 0;
  grove::io::Checkpoint checkpoint;

  explicit Run(const std::string& directory)
      : kicks(2024 + grove::Comm::world().rank()), checkpoint(directory + "/restart") {
    checkpoint.particles("stars", stars).domain("domains", domains);
    checkpoint.value("time", time).value("step", step).perRankValue("kicks", kicks).perRankValue("kick", kick);
  }
  void start() {  // a fresh start: stars on a lattice, decomposed
    const grove::Comm& comm = stars.comm();
    for (std::int64_t id = comm.rank(); id < kStars; id += comm.size()) {
      const double x = static_cast<double>(id % 27) / 27.0, y = static_cast<double>((id / 27) % 27) / 27.0;
      const double z = static_cast<double>(id / 729) / 28.0;
      stars.add({id, 1.0 / kStars, {x - 0.5, y - 0.5, z - 0.5}, {0.0, 0.0, 0.0}});
    }
    domains.decomposeDomainAll(stars);
    stars.exchangeParticle(domains);
  }
  void advance(std::int64_t until, bool write_checkpoints) {
    while (step < until) {
      for (Star& s : stars) {  // leapfrog in the well x'' = -x, then a random kick
        s.vel += (-kDt) * s.pos + grove::Vec3d{kick(kicks), kick(kicks), kick(kicks)};
        s.pos += kDt * s.vel;
      }
      time += kDt;
      ++step;
      if (step % 2 == 0) domains.decomposeDomainAll(stars);
      stars.exchangeParticle(domains);
      if (write_checkpoints && step % 5 == 0) grove::log("  wrote {}", checkpoint.write(step));
    }
  }
};

int main(int argc, char** argv) {
  grove::Runtime runtime(argc, argv);
  const grove::Comm comm = grove::Comm::world();
  const std::string dir = "tutorial_06_out";
  if (comm.isRoot()) std::filesystem::remove_all(dir);
  comm.barrier();
  bool ok = true;
  auto check = [&](bool claim, const std::string& what) {
    grove::log("{} {}", claim ? "ok:    " : "FAILED:", what);
    ok = ok && claim;
  };

  // 1. The run that never stops.
  std::uint64_t straight = 0;
  {
    Run run(dir + "/straight");
    run.start();
    run.advance(2 * kHalf, false);
    straight = grove::io::particleChecksum(run.stars);
  }

  // 2. A run that stops after kHalf steps, writing a checkpoint every 5: the files of steps 5 and
  //    10 are kept (the last two).
  {
    Run run(dir + "/split");
    run.start();
    run.advance(kHalf, true);
    const auto files = run.checkpoint.list();
    check(files.size() == 2 && files.back() == run.checkpoint.pathFor(kHalf), "the last two checkpoints are kept");
  }

  // 3. The same program started again: restoreLatest finds the newest checkpoint (nothing there: a
  //    fresh start), and the run goes on to 2 * kHalf.
  Run run(dir + "/split");
  const std::optional<grove::io::RestartInfo> from = run.checkpoint.restoreLatest();
  if (!from) run.start();
  check(from && from->step == kHalf && run.step == kHalf && std::abs(run.time - kHalf * kDt) < 1e-12,
        fmt::format("restarted from {} at step {}", from ? from->path : "nothing", run.step));
  run.advance(2 * kHalf, false);
  check(grove::io::particleChecksum(run.stars) == straight, "the restarted run is bitwise the straight one");

  // 3b. The newest checkpoint cut short (a disk filled up, a copy broke off): refused by name, and
  //     restoreLatest warns and takes the one before it.
  const std::string newest = run.checkpoint.pathFor(kHalf);
  if (comm.isRoot()) std::filesystem::resize_file(newest, std::filesystem::file_size(newest) - 10);
  comm.barrier();
  {
    Run again(dir + "/split");
    std::string refusal;
    try {
      again.checkpoint.restore(newest);
    } catch (const grove::Error& e) {
      refusal = e.what();
    }
    check(refusal.find(newest + " is truncated") != std::string::npos, "a truncated checkpoint is refused by name");
    const std::optional<grove::io::RestartInfo> older = again.checkpoint.restoreLatest();
    check(older && older->step == kHalf / 2 && again.step == kHalf / 2, "restoreLatest falls back to the one before");
  }

  // 4. A snapshot for other tools, read back at this rank count; any rank count reads it.
#if GROVE_HAS_HDF5
  {
    const std::string path = dir + "/snapshot_final.hdf5";
    grove::io::SnapshotHeader header;
    header.time = run.time;
    header.step = run.step;
    header.part_type = 4;  // GADGET's stars
    grove::io::writeSnapshot(path, run.stars, header);
    grove::ParticleSystem<Star> read;
    const grove::io::SnapshotHeader back = grove::io::readSnapshot(path, read, 4);
    check(read.globalCount() == kStars && back.time == run.time && back.step == run.step,
          fmt::format("{} holds {} stars at t = {}", path, read.globalCount(), back.time));
  }
#else
  grove::log("skipped: the snapshot (grove was built without HDF5)");
#endif
  return ok ? 0 : 1;
}
