// SEEK_DATA and SEEK_HOLE are GNU extensions on Linux, which Swift's Glibc module does not export.
#define _GNU_SOURCE
#include "CMirrorStoreSupport.h"
#include <errno.h>
#include <unistd.h>

int64_t mirrorstore_next_data(int descriptor, int64_t offset) {
#if defined(SEEK_DATA)
    return (int64_t)lseek(descriptor, (off_t)offset, SEEK_DATA);
#else
    (void)descriptor;
    return offset;
#endif
}

int64_t mirrorstore_next_hole(int descriptor, int64_t offset) {
#if defined(SEEK_HOLE)
    return (int64_t)lseek(descriptor, (off_t)offset, SEEK_HOLE);
#else
    (void)descriptor;
    (void)offset;
    errno = EINVAL;
    return -1;
#endif
}
