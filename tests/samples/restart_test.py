"""A sample stopped and restarted from its checkpoint is bitwise the run that never stopped.

Runs SAMPLE three ways at NP ranks: 2k steps straight; k steps writing a checkpoint every k/2;
then --restart latest to 2k. The final particle checksums (grove::io::particleChecksum, printed
by the sample) must agree. Then the newest checkpoint is cut short: --restart latest must warn,
fall back to the one before (step k/2) and still end bitwise equal; --restart naming the cut file
must stop with the file named. At NP > 1 a restart at NP - 1 ranks must run to the end (not
bitwise: another decomposition), refusing on its way a newer checkpoint with one flipped bit.

Issue 29: a restart whose particle count differs from the checkpoint's is refused with both
values named; one whose end time (or step limit) changed reports the change and takes it; one
that would take no step is refused, not a run of 0 steps; nbody's doubled --dt is taken (half
the steps left).

usage: restart_test.py MPIEXEC NP WORKDIR nbody|sph|evrard SAMPLE
"""
import os
import re
import shutil
import subprocess
import sys

# The options of each sample: shared, the first half (k = 4 steps), the whole run (8 steps).
RUNS = {
    "nbody": (["-n", "3000", "--dt", "0.0078125", "--decompose-every", "2", "--snapshot-format", "ascii"],
              ["--t-end", "0.03125"], ["--t-end", "0.0625"]),
    "sph": (["--nx", "48", "--n-ngb", "50", "--decompose-every", "2"], ["--max-steps", "4"], ["--max-steps", "8"]),
    "evrard": (["-N", "3000", "--decompose-every", "2", "--snapshot-format", "ascii"], ["--max-steps", "4"],
               ["--max-steps", "8"]),
}
# The option that fixes the particles, another value of it, and how the sample names it.
OTHER_PARTICLES = {"nbody": (["-n", "999"], "--particles 999 here, 3000 in the checkpoint"),
                   "sph": (["--nx", "56"], "--nx 56 here, 48 in the checkpoint"),
                   "evrard": (["-N", "2000"], "--particles 2000 here, 3000 in the checkpoint")}
# The change between the halves that a restart reports and takes.
TAKEN = {"nbody": "restart: --t-end 0.0625 taken (the checkpoint's run had 0.03125)",
         "sph": "restart: --max-steps 8 taken (the checkpoint's run had 4)",
         "evrard": "restart: --max-steps 8 taken (the checkpoint's run had 4)"}


def run(mpiexec, np, sample, args, cwd):
    cmd = [mpiexec, "-np", str(np), "--oversubscribe", sample] + args
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)


def checksum(result, what):
    assert result.returncode == 0, f"{what} failed:\n{result.stdout}\n{result.stderr}"
    found = re.findall(r"checksum ([0-9a-f]{16})", result.stdout)
    assert len(found) == 1, f"{what}: no checksum line:\n{result.stdout}"
    return found[0]


def main():
    mpiexec, np, work, name, sample = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    shared, half, whole = RUNS[name]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    straight = checksum(run(mpiexec, np, sample, shared + whole + ["-o", "straight"], work), "the straight run")
    first = run(mpiexec, np, sample, shared + half + ["-o", "split", "--checkpoint-every", "2"], work)
    checksum(first, "the first half")
    ckpt = os.path.join(work, "split")
    assert sorted(f for f in os.listdir(ckpt) if f.startswith("restart_")) == \
        ["restart_000000002.ckpt", "restart_000000004.ckpt"], os.listdir(ckpt)
    # Refused before any step: other particles, and a run with no step left (the first half's end).
    (option, value), words = OTHER_PARTICLES[name]
    changed = [value if i > 0 and shared[i - 1] == option else a for i, a in enumerate(shared)]
    refused = run(mpiexec, np, sample, changed + whole + ["-o", "split", "--restart", "latest"], work)
    assert refused.returncode != 0 and words in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    done = run(mpiexec, np, sample, shared + half + ["-o", "split", "--restart", "latest"], work)
    assert done.returncode != 0 and "no step left to run from the checkpoint split/restart_000000004.ckpt" in \
        done.stdout + done.stderr, done.stdout + done.stderr
    if name == "nbody":  # twice the step: the 4 steps left to t = 0.0625 become 2
        doubled = [("0.015625" if i > 0 and shared[i - 1] == "--dt" else a) for i, a in enumerate(shared)]
        doubled = run(mpiexec, np, sample, doubled + whole + ["-o", "split", "--restart", "latest"], work)
        assert doubled.returncode == 0 and "restart: --dt 0.015625 taken" in doubled.stdout and \
            "done: 2 steps" in doubled.stdout, doubled.stdout + doubled.stderr
    second = run(mpiexec, np, sample, shared + whole + ["-o", "split", "--restart", "latest"], work)
    assert "restarted from split/restart_000000004.ckpt: step 4" in second.stdout, second.stdout
    assert TAKEN[name] in second.stdout, second.stdout
    assert checksum(second, "the restarted run") == straight, "the restarted run is not bitwise the straight one"

    # The newest checkpoint cut short: refused by name, and latest falls back to step 2.
    newest = os.path.join(ckpt, "restart_000000004.ckpt")
    os.truncate(newest, os.path.getsize(newest) - 100)
    named = run(mpiexec, np, sample, shared + whole + ["-o", "split", "--restart", "split/restart_000000004.ckpt"], work)
    assert named.returncode != 0, "a truncated checkpoint was accepted"
    assert "split/restart_000000004.ckpt is truncated or damaged" in named.stdout + named.stderr, \
        named.stdout + named.stderr
    fallback = run(mpiexec, np, sample, shared + whole + ["-o", "split", "--restart", "latest"], work)
    assert "refused" in fallback.stdout and "restarted from split/restart_000000002.ckpt: step 2" in fallback.stdout, \
        fallback.stdout
    assert checksum(fallback, "the run from the older checkpoint") == straight

    if np > 1:
        # A newer checkpoint with one flipped bit in rank 0's particles, restored at another rank
        # count: refused for its checksum (the shares cut across the writers' blocks), and the
        # run goes on from the good one.
        damaged = os.path.join(ckpt, "restart_000000006.ckpt")
        shutil.copy(os.path.join(ckpt, "restart_000000002.ckpt"), damaged)
        with open(damaged, "r+b") as f:
            f.seek(64 + 203)
            byte = f.read(1)[0]
            f.seek(64 + 203)
            f.write(bytes([byte ^ 0x10]))
        other = run(mpiexec, np - 1, sample, shared + whole + ["-o", "split", "--restart", "latest"], work)
        assert "split/restart_000000006.ckpt: record" in other.stdout and "is damaged" in other.stdout and \
            "restarted from split/restart_000000002.ckpt: step 2" in other.stdout, other.stdout + other.stderr
        assert "decomposed again for this rank count" in other.stdout, other.stdout + other.stderr
        checksum(other, f"the restart at {np - 1} ranks")
    print(f"{name} at {np} ranks: restarted runs bitwise equal to the straight run ({straight})")


if __name__ == "__main__":
    main()
