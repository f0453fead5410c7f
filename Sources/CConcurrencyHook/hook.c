#include "CConcurrencyHook.h"

// Defined by the Swift runtime (swift/Runtime/Concurrency.h); resolved by the linker in static and dynamic builds.
extern void *_Nullable swift_task_enqueueGlobal_hook;

void *_Nullable *_Nonnull driverd_swift_task_enqueueGlobal_hook(void) { return &swift_task_enqueueGlobal_hook; }
