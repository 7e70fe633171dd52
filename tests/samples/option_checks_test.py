"""The samples refuse, before any step, what would make a run that does nothing or never ends (issue 29).

Each case runs SAMPLE with one bad option (the rest small, so that a sample that accepted it would
end soon) and expects a non-zero exit within the timeout and the option named with the reason:
NaN and infinity in every kind of number check (CLI11's own checks let NaN through), a run of no
step or of 2^53 steps and more, a particle count beyond std::int64_t or this machine's memory
(under a 4 GB address-space limit, at NP ranks), negative counts, a parameter file with an INI
section or of binary bytes, and bounds printed in a few digits.

usage: option_checks_test.py MPIEXEC NP WORKDIR nbody|sph|evrard SAMPLE
"""
import os
import resource
import shutil
import signal
import subprocess
import sys

TIMEOUT = 30
# Small runs, so that an option the sample wrongly accepts ends the run soon.
SMALL = {
    "nbody": ["-n", "200", "--t-end", "0.015625", "--snapshot-format", "ascii"],
    "sph": ["--nx", "48", "--n-ngb", "50", "--max-steps", "1"],
    "evrard": ["-N", "500", "--max-steps", "1", "--snapshot-format", "ascii"],
}
# (options, what the refusal must say)
CASES = {
    "nbody": [
        (["--dt", "nan"], "--dt: nan is not a finite number"),
        (["--t-end", "nan"], "--t-end: nan is not a finite number"),
        (["--eps", "inf"], "--eps: inf is not a finite number"),
        (["--dt", "1e-300"], "more than 2^53: not a run"),
        (["--t-end", "0.001"], "no step left to run from the start"),
        (["-n", "1"], "--particles: 1 is not an integer >= 2"),
        (["-n", "99999999999999999999"], "--particles: 99999999999999999999 is not an integer from 2 to"),
        (["--snapshot-every", "-3"], "--snapshot-every: -3 is not an integer >= 0"),
        (["--theta", "-1"], "--theta: -1 is not a number >= 0"),
    ],
    "sph": [
        (["--t-end", "nan"], "--t-end: nan is not a finite number"),
        (["--max-steps", "-5"], "--max-steps: -5 is not an integer >= 0"),
        (["--cfl", "nan"], "--cfl: nan is not a finite number"),
        (["--search-factor", "nan"], "--search-factor: nan is not a finite number"),
        (["--nx", "2147483640"], "particles do not fit a 64-bit count"),
    ],
    "evrard": [
        (["--t-end", "nan"], "--t-end: nan is not a finite number"),
        (["--cfl", "nan"], "--cfl: nan is not a finite number"),
        (["--dt-max", "nan"], "--dt-max: nan is not a finite number"),
        (["--n-ngb", "nan"], "--n-ngb: nan is not a finite number"),
        (["--snapshot-every", "-inf"], "--snapshot-every: -inf is not a finite number"),
        (["--n-ngb", "5000"], "--n-ngb: 5000 is not in [8, 1000]"),
    ],
}
# A particle count beyond memory, at NP ranks.
ABSURD = {"nbody": (["-n", "10000000000000"], "--particles 10000000000000: "),
          "sph": (["--nx", "200000"], "--nx 200000: "),
          "evrard": (["-N", "1000000000000"], "--particles 1000000000000: ")}


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run(cmd, cwd, limited=False):
    # A session of its own, so that ranks still running at the timeout go with it.
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=limit_memory if limited else None)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"no end within {TIMEOUT} s: {' '.join(cmd)}")
    return p.returncode, out + err


def refused(cmd, cwd, words, limited=False):
    rc, text = run(cmd, cwd, limited)
    assert rc != 0, f"accepted (exit 0): {' '.join(cmd)}\n{text[-2000:]}"
    for w in [words] if isinstance(words, str) else words:
        assert w in text, f"{' '.join(cmd)}: the refusal does not say '{w}':\n{text[-2000:]}"
    longest = max(len(line) for line in text.splitlines())
    assert longest < 400, f"{' '.join(cmd)}: a line of {longest} characters"


def main():
    mpiexec, np, work, name, sample = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    small = SMALL[name] + ["-o", "out"]
    mpi = [sample] if np == 1 else [mpiexec, "-np", str(np), "--oversubscribe", sample]  # one rank: a singleton

    def without(options):  # the small run's options but those given here (CLI11 takes each once)
        return [a for i, a in enumerate(small) if a not in options and (i == 0 or small[i - 1] not in options)]

    options, words = ABSURD[name]
    refused(mpi + without(options) + options, work,
            [words, f"on each of {np} rank{'s' if np > 1 else ''} need about", "more than the"], limited=True)
    if np > 1:
        print(f"{name} at {np} ranks: an absurd particle count refused")
        return

    for options, words in CASES[name]:
        refused([sample] + without(options) + options, work, words)

    # Parameter files: an INI section, and bytes that are no text.
    with open(os.path.join(work, "section.ini"), "w") as f:
        f.write("[run]\nt-end = 0.5\n")
    refused([sample] + small + ["--config", "section.ini"], work,
            "--config section.ini: section [run] is not one of")
    with open(os.path.join(work, "binary.toml"), "wb") as f:
        f.write(bytes([0x7f, ord("E"), ord("L"), ord("F"), 2, 1, 1, 0, 0xff, 0xfe]) + b"\n")
    rc, text = run([sample] + small + ["--config", "binary.toml"], work)
    assert rc != 0 and "--config binary.toml: not a text parameter file (byte 0 is 0x7f)" in text, text
    assert all(c == "\n" or " " <= c < "\x7f" for c in text), f"unprintable bytes in: {text!r}"
    print(f"{name}: every bad option refused before a step, with its reason")


if __name__ == "__main__":
    main()
