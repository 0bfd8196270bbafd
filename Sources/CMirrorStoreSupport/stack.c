// pthread_getattr_np is a GNU extension, which Swift's Glibc module does not export.
#define _GNU_SOURCE
#include "CMirrorStoreSupport.h"
#include <pthread.h>

static int stack_lowest_address(uintptr_t *lowest) {
#if defined(__APPLE__)
    pthread_t thread = pthread_self();
    uintptr_t top = (uintptr_t)pthread_get_stackaddr_np(thread);
    size_t size = pthread_get_stacksize_np(thread);
    if (top <= size) return 0;
    *lowest = top - size;
    return 1;
#elif defined(__linux__)
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
    void *address = NULL;
    size_t size = 0, guard = 0;
    int known = pthread_attr_getstack(&attributes, &address, &size) == 0 && address != NULL;
    if (pthread_attr_getguardsize(&attributes, &guard) != 0) guard = 0;
    pthread_attr_destroy(&attributes);
    if (!known) return 0;
    *lowest = (uintptr_t)address + guard;
    return 1;
#else
    (void)lowest;
    return 0;
#endif
}

int mirrorstore_stack_remaining(size_t *remaining) {
    uintptr_t lowest = 0;
    if (!stack_lowest_address(&lowest)) return 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (here < lowest) return 0;
    *remaining = here - lowest;
    return 1;
}
