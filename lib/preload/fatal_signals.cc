#include "preload/fatal_signals.h"

#include <signal.h>

#include "preload/recorder_state.h"

namespace memlife::rec {
namespace {

// Installed only over the default action, so after writing the records the
// default action is what runs: restored and re-raised, the exit status is
// the signal's own (a crash stays a crash for the parent and for
// `memlife run`). SA_RESETHAND restores it already; signal() makes sure.
void on_fatal_signal(int signo, siginfo_t* /*info*/, void* /*context*/) {
  flush_from_fatal_signal();
  signal(signo, SIG_DFL);
  raise(signo);
}

// Only where the program kept the default: a program's own handler stays in
// charge, and one it installs later replaces ours.
void install_where_default(int signo) {
  struct sigaction current {};
  if (sigaction(signo, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ours {};
  ours.sa_sigaction = on_fatal_signal;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&ours.sa_mask);
  sigaction(signo, &ours, nullptr);
}

}  // namespace

void install_crash_signal_handlers() {
  for (int signo : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) install_where_default(signo);
}

void install_termination_signal_handler() { install_where_default(SIGTERM); }

}  // namespace memlife::rec
