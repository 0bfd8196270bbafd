// The engine's public types that reach users through MirrorStore's own API: errors a store call
// can throw, and what `statistics` returns. Re-exported one by one, so `import MirrorStore` alone
// can catch `StorageError` and switch on its kind, while the rest of the engine (StorageEngine,
// WriteBatch, …) stays out of users' namespace. A typealias would name the type too, but not
// its members once SE-0444 (MemberImportVisibility) is on: `error.kind` would then need an
// `import MirrorStoreEngine` again. docs/ARCHITECTURE.md has the comparison.
@_exported import struct MirrorStoreEngine.StorageError
@_exported import struct MirrorStoreEngine.EngineStatistics
