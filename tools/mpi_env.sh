# Sourced by the run scripts: lets OpenMPI run as root (containers, CI) and avoids the
# shared-memory single-copy path that needs ptrace rights containers often lack.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_btl_vader_single_copy_mechanism=none
