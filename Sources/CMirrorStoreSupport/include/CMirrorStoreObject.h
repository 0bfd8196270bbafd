#ifndef CMIRRORSTOREOBJECT_H
#define CMIRRORSTOREOBJECT_H

// Apart from CMirrorStoreSupport.h because its pointers carry nullability, which clang then
// expects of every pointer in the same header.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A new instance of the Swift class whose metadata is `metadata`: `size` bytes aligned to
/// `alignment_mask + 1`, its header set (the class, a retain count of one), its stored properties
/// uninitialised. `swift_allocObject`, which never returns null (the runtime stops the process
/// when memory runs out). The caller initialises every stored property before anything can
/// release the instance.
void * _Nonnull mirrorstore_allocate_object(const void * _Nonnull metadata, size_t size, size_t alignment_mask);

#ifdef __cplusplus
}
#endif

#endif
