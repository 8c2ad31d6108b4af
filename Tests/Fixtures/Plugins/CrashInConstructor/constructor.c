// FixtureCrashInConstructorPlugin: a library whose constructor writes through a
// null pointer, so the process dies inside dlopen, before any entry point.
// Only ever loaded in a subprocess; the crash guard must blame the loading.
#include <stdint.h>
#include <unistd.h>

__attribute__((constructor)) static void crash_while_loading(void) {
    // The address is computed at run time so the compiler cannot drop the store.
    volatile int *address = (volatile int *)(uintptr_t)(16 + (getpid() & 0));
    *address = 1;
}

// Never reached; present so the file looks like a plugin to anyone who asks.
unsigned flowd_plugin_abi_version(void) { return 0; }
