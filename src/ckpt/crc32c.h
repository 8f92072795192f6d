/* CRC-32C (Castagnoli), the checksum of checkpoint files and manifests. It is what
 * storage stacks use for the same job (iSCSI, ext4 metadata, Btrfs), and x86-64 computes
 * it in hardware (SSE 4.2), so checking a checkpoint costs little next to writing it.
 * Thread-safe; no MPI. */
#ifndef TIO_CKPT_CRC32C_H
#define TIO_CKPT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* The CRC of buf[0..len) continued from crc (0 to start): crc32c(crc32c(0, a), b) is the
 * CRC of a followed by b. */
uint32_t tio_crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable table-driven form, exposed so that tests compare it with the hardware one. */
uint32_t tio_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* 1 when tio_crc32c uses the CPU's instruction. */
int tio_crc32c_hw(void);

#endif
