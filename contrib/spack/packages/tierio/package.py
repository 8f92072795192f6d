# Spack package for tierio. Use it from a clone of the repository:
#   spack repo add contrib/spack   (a Spack repository with namespace "tierio")
#   spack install tierio ^openmpi   (or ^mpich)
# tests/install/check_spack.py checks that its CMake arguments configure and build the tree.
from spack.package import *


class Tierio(CMakePackage):
    """Every tier of an HPC machine (DRAM, HBM, node-local storage, burst buffers, the
    parallel file system) through MPI: storage windows, a user-level memory-mapped I/O
    engine, storage-topology discovery, tiered aggregation and multi-level checkpoints."""

    homepage = "https://github.com/tierio/tierio"
    git = "https://github.com/tierio/tierio.git"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("uring", default=True, description="io_uring write-back driver of the ummap engine")
    variant("examples", default=False, description="Build the example programs")

    depends_on("c", type="build")
    depends_on("cmake@3.20:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi@3:")
    depends_on("hwloc@2:")
    depends_on("liburing", when="+uring")

    def cmake_args(self):
        mpi = self.spec["mpi"]
        return [
            self.define("MPI_C_COMPILER", mpi.mpicc),
            self.define("TIERIO_BUILD_TESTS", False),
            self.define("TIERIO_BUILD_BENCH", False),
            self.define_from_variant("TIERIO_BUILD_EXAMPLES", "examples"),
            self.define_from_variant("TIERIO_WITH_URING", "uring"),
        ]
