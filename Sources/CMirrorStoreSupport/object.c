// The Swift runtime's allocator for class instances. Swift code cannot name it (the compiler
// reserves runtime symbols), and C can: it is an exported C function of the runtime.
#include "CMirrorStoreObject.h"

extern void *swift_allocObject(const void *metadata, size_t requiredSize, size_t requiredAlignmentMask);

void *mirrorstore_allocate_object(const void *metadata, size_t size, size_t alignment_mask) {
    return swift_allocObject(metadata, size, alignment_mask);
}
