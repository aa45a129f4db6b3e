/*
 * A stand-in for Windows' bcryptprimitives.dll, for running tests under
 * Wine 8.0, which does not ship that DLL.
 *
 * Rust's standard library (for its HashMap seeds) and Go's runtime import one
 * function from it: ProcessPrng, which fills a buffer with random bytes and
 * always succeeds. Advapi32's RtlGenRandom (exported as SystemFunction036)
 * does the same job and Wine has it, so this DLL forwards to it.
 *
 * Built by .ci/platforms/build-stubs with mingw-w64 and copied into the
 * private Wine prefix's system32 by .ci/platforms/wine-run.
 */
#include <windows.h>

/* advapi32.dll; declared here because its header name varies by SDK. */
__declspec(dllimport) BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    /* RtlGenRandom takes a 32-bit length: hand it the buffer in pieces. */
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            /* ProcessPrng is documented never to fail; there is no way to
             * report it, so stop the process rather than return zeros. */
            ExitProcess(0xC000000D /* STATUS_INVALID_PARAMETER */);
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
