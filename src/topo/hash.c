#include "topo/hash.h"

/* An FNV-1a-style pass over the bytes (its own start value and odd multiplier per half),
 * then a strong finaliser (splitmix64's), so that the two halves behave as independent
 * hashes. */
static uint64_t half(const char *s, uint64_t start, uint64_t mul)
{
    uint64_t h = start;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= mul;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

void topo_hash128(const char *s, uint32_t out[4])
{
    uint64_t a = half(s, 0xcbf29ce484222325ull, 0x100000001b3ull);
    uint64_t b = half(s, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull);
    out[0] = (uint32_t)a;
    out[1] = (uint32_t)(a >> 32);
    out[2] = (uint32_t)b;
    out[3] = (uint32_t)(b >> 32);
}
