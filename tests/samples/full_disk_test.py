"""A full disk and a killed writer lose no good checkpoint or snapshot, and nothing hangs (issue 29).

samples/nbody at NP ranks, its writes failed on purpose through GROVE_FAULT_INJECT (grove's file
layer, doc/io.md): ENOSPC on the last rank when its third checkpoint is written, then on its
second HDF5 snapshot of a run that overwrites an earlier run's; and a rank killed (SIGKILL) while
writing that snapshot. Each run must stop with an error (not hang: every run has a timeout) that
names the file and "No space left on device", the same on every rank that printed it; the two
checkpoints before it must stay and restart the run; the earlier snapshot of that name must be
bitwise as it was, and no temporary file may stay after an error. The energy log, which rank 0
writes alone, on /dev/full must stop the run with the same words. Where this machine lets root
mount a small tmpfs, the same runs meet a real full disk (CI machines may not allow mounts: that
part is then skipped, and says so).

usage: full_disk_test.py MPIEXEC NP WORKDIR NBODY hdf5|ascii
"""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys

ARGS = ["-n", "3000", "--dt", "0.0078125", "--decompose-every", "2"]
RECORDS = 6        # nbody's checkpoint: bodies, domain, time, step, initial_energy, options
FIELDS = 6         # nbody's snapshot: Coordinates, Velocities, Masses, ParticleIDs, Acceleration, Potential
TIMEOUT = 60       # a run that takes longer hangs


def run(mpiexec, np, nbody, args, cwd, fault=None):
    env = dict(os.environ)
    env.pop("GROVE_FAULT_INJECT", None)
    if fault:
        env["GROVE_FAULT_INJECT"] = fault
    # One rank runs as a singleton (MPI started without mpiexec): the same MPI-IO, and no second
    # and a half that mpiexec takes to report an abort.
    cmd = ([nbody] if np == 1 else [mpiexec, "-np", str(np), "--oversubscribe", nbody]) + args
    # A session of its own, so that a hung run's ranks go with it.
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"hung (no end within {TIMEOUT} s): {' '.join(cmd)} with GROVE_FAULT_INJECT={fault}")
    return p.returncode, out + err


def grove_errors(text):
    """The grove::Error lines, without "grove error on rank R in " (which names the rank)."""
    return [m.group(1) for m in re.finditer(r"grove error on rank \d+ in (.*)", text)]


def expect_failure(rc, text, file, what):
    assert rc != 0, f"{what}: the run did not fail:\n{text}"
    errors = grove_errors(text)
    assert errors, f"{what}: no grove error:\n{text}"
    assert all(e == errors[0] for e in errors), f"{what}: ranks disagree:\n" + "\n".join(errors)
    assert file in errors[0] and "No space left on device" in errors[0], errors[0]


def files(directory, prefix):
    return sorted(f for f in os.listdir(directory) if f.startswith(prefix))


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def checkpoints(mpiexec, np, nbody, work, out, fault, note):
    """A run whose third checkpoint fails; the two before it restart the run."""
    rc, text = run(mpiexec, np, nbody, ARGS + ["--t-end", "0.0625", "--snapshot-format", "ascii",
                                               "--checkpoint-every", "2", "-o", out], work, fault)
    expect_failure(rc, text, f"checkpoint {out}/restart_000000006.ckpt not written", f"{note}checkpoint")
    assert files(os.path.join(work, out), "restart_") == ["restart_000000002.ckpt", "restart_000000004.ckpt"], \
        files(os.path.join(work, out), "restart_")
    rc, text = run(mpiexec, np, nbody, ARGS + ["--t-end", "0.0625", "--snapshot-format", "ascii", "-o", out,
                                               "--restart", "latest"], work)
    assert rc == 0 and f"restarted from {out}/restart_000000004.ckpt: step 4" in text, text


def main():
    mpiexec, np, work, nbody, snapshots = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    last = np - 1
    # This rank's writes: a checkpoint's blocks (rank 0 also its preamble, directory and end mark);
    # a snapshot's tables (rank 0 also its layout).
    per_checkpoint = RECORDS + (3 if last == 0 else 0)
    per_snapshot = FIELDS + (1 if last == 0 else 0)

    checkpoints(mpiexec, np, nbody, work, "ckpt", f"enospc:{2 * per_checkpoint + 1}@{last}", "injected: ")

    if snapshots == "hdf5":
        # A run's snapshots, then a run of another seed over them, failing at its second snapshot.
        rc, text = run(mpiexec, np, nbody, ARGS + ["--t-end", "0.03125", "--snapshot-every", "1", "-o", "snap"], work)
        assert rc == 0, text
        second = os.path.join(work, "snap", "snapshot_00002.hdf5")
        before = digest(second)
        rc, text = run(mpiexec, np, nbody, ARGS + ["--t-end", "0.03125", "--snapshot-every", "1", "-o", "snap",
                                                   "--seed", "2"], work, f"enospc:{per_snapshot + 1}@{last}")
        expect_failure(rc, text, "snapshot snap/snapshot_00002.hdf5 not written", "snapshot")
        assert digest(second) == before, "a failed snapshot changed the file of its name"
        assert not os.path.exists(second + ".tmp"), "a failed snapshot left its temporary file"
        # Killed while writing it: the file of that name is still the earlier run's.
        rc, text = run(mpiexec, np, nbody, ARGS + ["--t-end", "0.03125", "--snapshot-every", "1", "-o", "snap",
                                                   "--seed", "3"], work, f"kill:{per_snapshot + 2}@{last}")
        assert rc != 0, f"the killed run ended well:\n{text}"
        assert digest(second) == before, "a run killed while writing a snapshot changed the file of its name"

    # What the sample writes alone on rank 0 (its energy log here, ASCII snapshots alike) on a full
    # disk: /dev/full in the log's place.
    if os.path.exists("/dev/full"):
        os.makedirs(os.path.join(work, "devfull"))
        os.symlink("/dev/full", os.path.join(work, "devfull", "energy.csv"))
        rc, text = run(mpiexec, np, nbody, ARGS + ["--t-end", "0.015625", "--snapshot-format", "ascii",
                                                   "-o", "devfull"], work)
        assert rc != 0 and "writing devfull/energy.csv failed: No space left on device" in text, text

    # A real full disk, where root may mount a small tmpfs.
    disk = os.path.join(work, "tmpfs")
    os.makedirs(disk)
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1500k", "tmpfs", disk],
                                                   capture_output=True).returncode == 0
    if not mounted:
        print("a real full disk: skipped (this machine does not let the test mount a tmpfs)")
    else:
        try:
            rc, text = run(mpiexec, np, nbody, ["-n", "4000"] + ARGS[2:] + [
                "--t-end", "0.0625", "--snapshot-format", "ascii", "--checkpoint-every", "2", "-o", "tmpfs/o"], work)
            assert rc != 0 and "No space left on device" in text, text
            errors = grove_errors(text)
            assert errors and all(e == errors[0] for e in errors), text
            kept = files(os.path.join(disk, "o"), "restart_")
            assert len(kept) == 2 and not any(f.endswith(".tmp") for f in kept), kept
            shutil.copytree(os.path.join(disk, "o"), os.path.join(work, "from_tmpfs"),
                            ignore=shutil.ignore_patterns("snapshot_*"))
            rc, text = run(mpiexec, np, nbody, ["-n", "4000"] + ARGS[2:] + [
                "--t-end", "0.0625", "--snapshot-format", "ascii", "-o", "from_tmpfs", "--restart", "latest"], work)
            assert rc == 0 and "restarted from from_tmpfs/" + kept[-1] in text, text
            if snapshots == "hdf5":
                shutil.rmtree(os.path.join(disk, "o"))
                rc, text = run(mpiexec, np, nbody, ["-n", "4000"] + ARGS[2:] + [
                    "--t-end", "0.0625", "--snapshot-every", "1", "-o", "tmpfs/o"], work)
                assert rc != 0 and "No space left on device" in text, text
                assert not any(f.endswith(".tmp") for f in os.listdir(os.path.join(disk, "o"))), \
                    os.listdir(os.path.join(disk, "o"))
            print("a real full disk (tmpfs): every run stopped with the error, the checkpoints before it restart")
        finally:
            # Lazily: the ranks of a run stopped at its timeout may still hold files there.
            subprocess.run(["umount", "-l", disk])
    print(f"full disk at {np} rank(s): nothing hung, nothing good was lost")


if __name__ == "__main__":
    main()
