/* A 128-bit hash of a string, to compare strings across processes without sending them:
 * directory names (do all processes name the same one?) and processor names (which
 * processes share a node?). Two independent 64-bit halves; different strings collide with
 * probability about 2^-128. Not cryptographic: the strings come from the job itself. */
#ifndef TIO_TOPO_HASH_H
#define TIO_TOPO_HASH_H

#include <stdint.h>

void topo_hash128(const char *s, uint32_t out[4]);

#endif
