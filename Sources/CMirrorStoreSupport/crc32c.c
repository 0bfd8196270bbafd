// Hardware CRC32C. The portable slicing-by-8 version lives in Swift
// (MirrorStoreEngine/CRC32C.swift); this file only adds the CPU instruction
// where one exists, chosen at run time so one binary runs on every CPU.

#include "CMirrorStoreSupport.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <nmmintrin.h>

int mirrorstore_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

// The target attribute lets this one function use SSE 4.2 without
// compiling the whole target with -msse4.2 (no unsafe flags needed).
__attribute__((target("sse4.2")))
uint32_t mirrorstore_crc32c_hardware_update(uint32_t crc, const void *data, size_t length) {
    const unsigned char *bytes = (const unsigned char *)data;
    uint64_t wide = crc;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        wide = _mm_crc32_u64(wide, word);
        bytes += 8;
        length -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (length > 0) {
        narrow = _mm_crc32_u8(narrow, *bytes);
        bytes += 1;
        length -= 1;
    }
    return narrow;
}

#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)

#include <arm_acle.h>

int mirrorstore_crc32c_hardware_available(void) {
    return 1;
}

uint32_t mirrorstore_crc32c_hardware_update(uint32_t crc, const void *data, size_t length) {
    const unsigned char *bytes = (const unsigned char *)data;
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        crc = __crc32cd(crc, word);
        bytes += 8;
        length -= 8;
    }
    while (length > 0) {
        crc = __crc32cb(crc, *bytes);
        bytes += 1;
        length -= 1;
    }
    return crc;
}

#else

int mirrorstore_crc32c_hardware_available(void) {
    return 0;
}

uint32_t mirrorstore_crc32c_hardware_update(uint32_t crc, const void *data, size_t length) {
    (void)data;
    (void)length;
    return crc;
}

#endif
