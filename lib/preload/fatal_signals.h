// Signals that end the process: the recorder writes what it buffered, then
// lets the signal do what it would have done without memlife.
#pragma once

namespace memlife::rec {

// Crash signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), at preload
// start-up: before the program's own handlers (Python's faulthandler), which
// chain to the one they replace, so ours still runs after theirs.
void install_crash_signal_handlers();

// SIGTERM, once recording starts: before then there is nothing to write.
// In a Python process that is after the interpreter read its signal table
// at start-up, so `signal.getsignal(SIGTERM)` still reads SIG_DFL, and a
// program that saves and later restores that handler (Lightning's signal
// connector) restores the default rather than keeping its own.
void install_termination_signal_handler();

}  // namespace memlife::rec
