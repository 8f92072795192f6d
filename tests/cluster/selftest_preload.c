/* Preloaded by run_selftest.sh: cluster_selftest looks this symbol up to check that
 * LD_PRELOAD reaches the ranks. */
int tio_selftest_preloaded = 1;
