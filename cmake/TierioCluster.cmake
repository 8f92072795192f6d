# Multi-node tests on the emulated cluster (tools/cluster/tio-cluster; DESIGN.md
# "Emulated cluster for tests"): the test runs
#   tio-cluster run --nodes k --mpi ${TIERIO_MPI_FLAVOR} --np p [--ppn q] [ARGS...] -- COMMAND
# which brings up k namespace "nodes", launches the job across them with the MPI this tree
# is built against, and always tears the cluster down.  Needs root; elsewhere tio-cluster
# exits 77 and the test is reported as skipped.
#
#   tio_add_cluster_test(NAME n NODES k NP p [PPN q] [TIMEOUT s] [PRELOAD]
#                        [ENV VAR=value ...] [ARGS tio-cluster-option ...]
#                        [LABELS l ...] COMMAND exe args...)
#
# PPN: ranks per node (default: ceil(p/k)); ranks fill node0 first.
# ARGS: more options of `tio-cluster run`, e.g. --pfs-write-bps 10Mi, --node-mem-limit 256Mi,
#   --node-local-size 64Mi, --net-rate 1gbit, --pfs DIR, --env VAR=value.
# PRELOAD: the ranks get libtierio-pmpi in LD_PRELOAD (tio-cluster forwards it to the
#   ranks only, not to the launcher).
# ENV: environment of the test; tio-cluster forwards TIERIO_*, OMPI_MCA_*, LD_*, PATH,
#   PYTHONPATH, VIRTUAL_ENV, UCX_*, MPIR_CVAR_* to the ranks.  The ranks also get
#   TIERIO_PFS (the shared directory) and TIERIO_NODE_LOCAL (node-private tmpfs).
# COMMAND: the first word may be a target name.

set(TIERIO_CLUSTER_TOOL ${CMAKE_SOURCE_DIR}/tools/cluster/tio-cluster)

function(tio_add_cluster_test)
  cmake_parse_arguments(T "PRELOAD" "NAME;NODES;NP;PPN;TIMEOUT"
                        "ENV;ARGS;LABELS;COMMAND" ${ARGN})
  if(NOT T_NAME OR NOT T_NODES OR NOT T_NP OR NOT T_COMMAND)
    message(FATAL_ERROR "tio_add_cluster_test: NAME, NODES, NP and COMMAND are required")
  endif()
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tio_add_cluster_test(${T_NAME}): unknown arguments ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()

  # add_test resolves a target name only in the first word, which is tio-cluster here.
  list(GET T_COMMAND 0 exe)
  if(TARGET ${exe})
    list(REMOVE_AT T_COMMAND 0)
    list(PREPEND T_COMMAND "$<TARGET_FILE:${exe}>")
  endif()

  set(run ${TIERIO_CLUSTER_TOOL} run --nodes ${T_NODES} --mpi ${TIERIO_MPI_FLAVOR}
      --np ${T_NP})
  if(T_PPN)
    list(APPEND run --ppn ${T_PPN})
  endif()
  add_test(NAME ${T_NAME} COMMAND ${run} ${T_ARGS} -- ${T_COMMAND})

  set(env ${TIERIO_TEST_ENV} ${T_ENV} "TIERIO_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")
  if(T_PRELOAD)
    list(APPEND env "LD_PRELOAD=$<TARGET_FILE:tierio-pmpi>")
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${env}"
                       LABELS "cluster;${T_LABELS}" SKIP_RETURN_CODE 77)
  if(NOT TIERIO_MPI_FLAVOR MATCHES "^(openmpi|mpich)$")
    # tio-cluster can only launch Open MPI or MPICH jobs
    set_tests_properties(${T_NAME} PROPERTIES DISABLED TRUE)
  endif()
endfunction()
