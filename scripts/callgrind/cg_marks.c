/* Start/stop callgrind's instrumentation from the measured program (via
 * ctypes), so the count covers the loop and not torch's import. */
#include <valgrind/callgrind.h>

void cg_start(void) {
  CALLGRIND_ZERO_STATS;
  CALLGRIND_START_INSTRUMENTATION;
}

void cg_stop(void) {
  CALLGRIND_DUMP_STATS;
  CALLGRIND_STOP_INSTRUMENTATION;
}
