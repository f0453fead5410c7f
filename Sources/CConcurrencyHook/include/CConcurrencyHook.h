#ifndef C_CONCURRENCY_HOOK_H
#define C_CONCURRENCY_HOOK_H

/// The address of the Swift runtime's `swift_task_enqueueGlobal_hook`, by link-time reference rather than `dlsym`:
/// a binary with the Swift runtime linked in statically (`--static-swift-stdlib`, as the package is built) hides the
/// runtime's symbols from `dlsym` (`--exclude-libs ALL`), so SwiftNIO's takeover of the global executor fails there.
void *_Nullable *_Nonnull driverd_swift_task_enqueueGlobal_hook(void);

#endif
