#include "ckpt/crc32c.h"

#include <pthread.h>
#include <string.h>

/* Reflected polynomial of CRC-32C. */
#define POLY 0x82F63B78u

/* Slicing by 8: table[k][b] is the CRC contribution of byte b followed by k zero bytes,
 * so eight input bytes are folded with eight lookups. */
static uint32_t table[8][256];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int have_hw;

static void init(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (POLY & (0u - (c & 1u)));
        table[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            table[k][b] = (table[k - 1][b] >> 8) ^ table[0][table[k - 1][b] & 0xFF];
#if defined(__x86_64__)
    __builtin_cpu_init();
    have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

uint32_t tio_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&once, init);
    const unsigned char *p = buf;
    uint32_t c = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c; /* little-endian: the CRC meets the first four bytes */
        c = table[7][w & 0xFF] ^ table[6][(w >> 8) & 0xFF] ^ table[5][(w >> 16) & 0xFF] ^
            table[4][(w >> 24) & 0xFF] ^ table[3][(w >> 32) & 0xFF] ^
            table[2][(w >> 40) & 0xFF] ^ table[1][(w >> 48) & 0xFF] ^ table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
    return ~c;
}

#if defined(__x86_64__)
/* Three independent streams hide the instruction's 3-cycle latency. The register update
 * is linear, so the CRC register over A B equals the register over A shifted across |B|
 * zero bytes, xor the register over B started from zero; the shift across one block is
 * four table lookups (tables computed once). */
#define BLOCK 2048 /* bytes per stream per round */

static uint32_t shift_table[4][256]; /* register (byte << 8k) moved across BLOCK zeros */
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

static uint32_t shift_zeros(uint32_t a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a = (a >> 8) ^ table[0][a & 0xFF];
    return a;
}

static void shift_init(void)
{
    pthread_once(&once, init);
    for (uint32_t b = 0; b < 256; b++)
        for (int k = 0; k < 4; k++)
            shift_table[k][b] = shift_zeros(b << (8 * k), BLOCK);
}

static inline uint32_t shift_block(uint32_t c)
{
    return shift_table[0][c & 0xFF] ^ shift_table[1][(c >> 8) & 0xFF] ^
           shift_table[2][(c >> 16) & 0xFF] ^ shift_table[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const void *buf,
                                                          size_t len)
{
    const unsigned char *p = buf;
    uint64_t c = (uint32_t)~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    while (len >= 3 * BLOCK) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < BLOCK; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + BLOCK + i, 8);
            memcpy(&w2, p + 2 * BLOCK + i, 8);
            c = __builtin_ia32_crc32di(c, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        c = shift_block((uint32_t)c) ^ c1;
        c = shift_block((uint32_t)c) ^ c2;
        p += 3 * BLOCK;
        len -= 3 * BLOCK;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

int tio_crc32c_hw(void)
{
    pthread_once(&once, init);
    return have_hw;
}

uint32_t tio_crc32c(uint32_t crc, const void *buf, size_t len)
{
#if defined(__x86_64__)
    if (tio_crc32c_hw()) {
        pthread_once(&shift_once, shift_init);
        return crc_hw(crc, buf, len);
    }
#endif
    return tio_crc32c_sw(crc, buf, len);
}
