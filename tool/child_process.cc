#include "child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace memlife::tool {
namespace {

std::atomic<pid_t> g_child{0};

// A signal someone sent to memlife with kill() is passed on. A signal the
// terminal generated (Ctrl-C: si_code > 0) already reached the child, which
// shares our process group; forwarding it would deliver it twice.
void forward_signal(int sig, siginfo_t* info, void*) {
  pid_t child = g_child.load();
  if (child <= 0) return;
  if (info && info->si_code > 0) return;
  if (info && info->si_pid == child) return;
  ::kill(child, sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM};

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) ::sigaction(sig, &sa, nullptr);
}

void restore_default_signals() {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : kForwarded) ::sigaction(sig, &sa, nullptr);
}

std::vector<std::string> merged_environment(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : env) {
      if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
          entry[name.size()] == '=') {
        replaced = true;
        break;
      }
    }
    if (!replaced) out.emplace_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

int run_child(const std::string& executable, const std::vector<std::string>& argv,
              const std::vector<std::pair<std::string, std::string>>& env) {
  // Everything the child needs is built before fork: after it, the child
  // only calls async-signal-safe functions.
  std::vector<std::string> argv_copy = argv;
  std::vector<std::string> env_strings = merged_environment(env);
  std::vector<char*> child_argv = pointers(argv_copy);
  std::vector<char*> child_env = pointers(env_strings);

  install_forwarding();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "memlife run: fork failed: %s\n", std::strerror(errno));
    restore_default_signals();
    return 2;
  }
  if (pid == 0) {
    restore_default_signals();
    // The child dies with memlife: a SIGKILLed `memlife run` must not leave
    // the traced command running orphaned. The flag survives execve (the
    // command is not set-uid). If memlife died before prctl took effect the
    // child has been re-parented already: exit like it would have been killed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(128 + SIGKILL);
    ::execve(executable.c_str(), child_argv.data(), child_env.data());
    const char* reason = std::strerror(errno);
    const char* prefix = "memlife run: cannot execute ";
    (void)!::write(2, prefix, std::strlen(prefix));
    (void)!::write(2, executable.c_str(), executable.size());
    (void)!::write(2, ": ", 2);
    (void)!::write(2, reason, std::strlen(reason));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  g_child.store(pid);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "memlife run: waitpid failed: %s\n", std::strerror(errno));
      return 2;
    }
  }
  g_child.store(0);
  restore_default_signals();
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 2;
}

}  // namespace memlife::tool
