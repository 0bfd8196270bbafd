#ifndef C_MALLOC_STATISTICS_H
#define C_MALLOC_STATISTICS_H

#include <stddef.h>

/// Bytes the process's allocator has handed out and not yet taken back, in every arena, small
/// blocks and mmap'ed ones alike (glibc's `mallinfo2`: `uordblks + hblkhd`). Returns 0 where the
/// C library has no `mallinfo2`.
///
/// The difference across an operation is the memory that the operation left allocated, whatever
/// the allocator keeps cached or the kernel keeps resident.
size_t malloc_statistics_allocated_bytes(void);

#endif
