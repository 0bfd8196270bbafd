#ifndef CMIRRORSTORESUPPORT_H
#define CMIRRORSTORESUPPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Returns 1 when this CPU has a CRC32C instruction that
/// `mirrorstore_crc32c_hardware_update` can use, 0 otherwise.
int mirrorstore_crc32c_hardware_available(void);

/// Extends a CRC32C (Castagnoli) over `length` bytes with the CPU's CRC32C
/// instruction. `crc` is the running, non-inverted register value.
/// Call only when `mirrorstore_crc32c_hardware_available()` returned 1;
/// elsewhere it returns `crc` unchanged.
uint32_t mirrorstore_crc32c_hardware_update(uint32_t crc, const void *data, size_t length);

/// Stores in `remaining` how many bytes of the calling thread's stack are left
/// below the caller (above the stack's guard area) and returns 1, or returns 0
/// when the system does not say. Measured from the frame address, which stays
/// on the real stack even when AddressSanitizer moves locals to fake frames.
int mirrorstore_stack_remaining(size_t *remaining);

/// The offset of the first byte at or after `offset` that lies in data, not in
/// a hole (`lseek` with `SEEK_DATA`), or -1 with `errno` set: `ENXIO` when only
/// a hole follows. Where the system cannot tell, returns `offset`: all data.
int64_t mirrorstore_next_data(int descriptor, int64_t offset);

/// The offset of the first hole at or after `offset` (`lseek` with `SEEK_HOLE`;
/// the end of the file counts as one), or -1 with `errno` set. Both move the
/// descriptor's file offset, which the engine never uses (it reads with `pread`).
int64_t mirrorstore_next_hole(int descriptor, int64_t offset);

/// Asks the CPU to start loading into its caches the lines that hold `length`
/// bytes at `start`, up to the first `MIRRORSTORE_PREFETCH_LIMIT` bytes, so that
/// the loads of a value read soon after overlap rather than wait for each line in
/// turn. A hint only: a prefetch never faults, whatever the address, and reads
/// nothing the caller sees.
#define MIRRORSTORE_PREFETCH_LIMIT 1024
static inline void mirrorstore_prefetch(const void *start, size_t length) {
    if (length == 0) return;
    if (length > MIRRORSTORE_PREFETCH_LIMIT) length = MIRRORSTORE_PREFETCH_LIMIT;
    uintptr_t line = (uintptr_t)start & ~(uintptr_t)63;
    uintptr_t last = (uintptr_t)start + length - 1;
    for (; line <= last; line += 64) __builtin_prefetch((const void *)line, 0, 3);
}

#ifdef __cplusplus
}
#endif

#endif
