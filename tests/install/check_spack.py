#!/usr/bin/env python3
"""The Spack package (contrib/spack) against this tree, without Spack: its cmake_args run
with a stand-in of the few Spack names it uses and a spec naming this build's MPI
compiler, and CMake configures the tree with them and nothing it would ignore.

    check_spack.py SRC MPICC WORKDIR
"""
import importlib.util
import re
import subprocess
import sys
import types

src, mpicc, work = sys.argv[1:4]

# The names `from spack.package import *` gives a package, as Spack defines them.
pkg = types.ModuleType("spack.package")
class CMakePackage:
    def __init__(self, spec):
        self.spec = spec
    def define(self, name, value):
        if isinstance(value, bool):
            value = "ON" if value else "OFF"
        return f"-D{name}={value}"
    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant])
directives = ["version", "variant", "depends_on", "license", "conflicts", "patch"]
for d in directives:
    setattr(pkg, d, lambda *a, **k: None)
pkg.CMakePackage = CMakePackage
pkg.__all__ = ["CMakePackage"] + directives
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = pkg

spec_path = f"{src}/contrib/spack/packages/tierio/package.py"
loader = importlib.util.spec_from_file_location("tierio_package", spec_path)
module = importlib.util.module_from_spec(loader)
loader.loader.exec_module(module)

class Spec(dict):
    variants = {"uring": False, "examples": True}
spec = Spec(mpi=types.SimpleNamespace(mpicc=mpicc))
args = module.Tierio(spec).cmake_args()

out = subprocess.run(["cmake", "-S", src, "-B", work] + args, capture_output=True, text=True)
log = out.stdout + out.stderr
if out.returncode != 0:
    sys.exit(f"check_spack: CMake refused the package's arguments {args}:\n{log}")
if "were not used by the project" in log:
    sys.exit(f"check_spack: CMake ignores some of the package's arguments {args}:\n{log}")
cache = open(f"{work}/CMakeCache.txt").read()
for want in (r"TIERIO_BUILD_TESTS:BOOL=OFF", r"TIERIO_WITH_URING:\w+=OFF",
             r"MPI_C_COMPILER:\w+=" + re.escape(mpicc)):
    if not re.search("^" + want + "$", cache, re.M):
        sys.exit(f"check_spack: {want} is not in the configured cache (args {args})")
print(f"check_spack: the package's arguments configure the tree: {' '.join(args)}")
