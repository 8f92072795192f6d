# Helpers to register tests. Every MPI test runs under mpiexec with a fixed rank count
# and a timeout: a hang is a failure.
#
#   tio_add_mpi_test(NAME n NP ranks [NP_MPICH ranks] [TIMEOUT s] [PRELOAD]
#                    [ENV VAR=value ...] [LABELS l ...] COMMAND exe args...)
#
# NP_MPICH (default: min(NP, 2)) exists because MPICH busy-polls: oversubscribed it is
# 100x slower (MACHINE.md). PRELOAD runs the command with libtierio-pmpi in LD_PRELOAD,
# the way unmodified binaries get storage windows.

set(TIERIO_TEST_ENV "TIERIO_LOG=warn")
set(TIERIO_MPIEXEC_PRE "")
if(TIERIO_MPI_FLAVOR STREQUAL "openmpi")
  list(APPEND TIERIO_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
       OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
       # osc rdma is broken on this machine kind (MACHINE.md): select sm + pt2pt.
       OMPI_MCA_osc=sm,pt2pt
       OMPI_MCA_btl_vader_single_copy_mechanism=none)
endif()

function(tio_add_mpi_test)
  cmake_parse_arguments(T "PRELOAD" "NAME;NP;NP_MPICH;TIMEOUT" "ENV;LABELS;COMMAND" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  set(np ${T_NP})
  if(TIERIO_MPI_FLAVOR STREQUAL "mpich")
    if(T_NP_MPICH)
      set(np ${T_NP_MPICH})
    elseif(np GREATER 2)
      set(np 2)
    endif()
  endif()
  add_test(NAME ${T_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${T_COMMAND})
  set(env ${TIERIO_TEST_ENV} ${T_ENV} "TIERIO_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")
  if(T_PRELOAD)
    list(APPEND env "LD_PRELOAD=$<TARGET_FILE:tierio-pmpi>")
    list(APPEND T_LABELS preload) # not under ASan: its runtime must be loaded first
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT}
                       ENVIRONMENT "${env}" LABELS "mpi;${T_LABELS}" SKIP_RETURN_CODE 77)
endfunction()

# A plain (non-MPI) unit test.
function(tio_add_unit_test name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE tierio-internal)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 60 LABELS unit
                       ENVIRONMENT "TIERIO_TEST_TMPDIR=${CMAKE_BINARY_DIR}/test-tmp")
endfunction()

file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/test-tmp)
