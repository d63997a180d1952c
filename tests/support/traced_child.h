// Runs a program the way `memlife run` would, for tests of injected code:
// LD_PRELOAD of the recorder, MEMLIFE_OUTPUT_DIR, and whatever MEMLIFE_*
// settings the test asks for; the parent's own MEMLIFE_* and LD_PRELOAD are
// dropped so the test does not depend on how it was started.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace memlife::testing {

struct ChildRun {
  int status = 0;                             // raw waitpid status
  std::string captured;                       // what the child wrote to the captured descriptor
  std::vector<std::filesystem::path> traces;  // *.mltrace in the output dir, sorted
};

// `preload` empty: run untraced. `capture_fd` (1 or 2) goes to a file.
inline ChildRun run_child(const std::string& preload, const std::filesystem::path& dir,
                          std::vector<std::string> args, const std::vector<std::string>& settings,
                          int capture_fd) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "MEMLIFE_", 8) != 0 && std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
      env.emplace_back(*e);
  }
  if (!preload.empty()) {
    env.push_back("LD_PRELOAD=" + preload);
    env.push_back("MEMLIFE_OUTPUT_DIR=" + dir.string());
    env.insert(env.end(), settings.begin(), settings.end());
  }
  const std::filesystem::path capture_path = dir / "captured.txt";
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, capture_fd, capture_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ChildRun run;
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    run.status = -1;
    return run;
  }
  posix_spawn_file_actions_destroy(&actions);
  waitpid(pid, &run.status, 0);
  std::ifstream captured(capture_path);
  run.captured.assign(std::istreambuf_iterator<char>(captured), {});
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".mltrace") run.traces.push_back(entry.path());
  }
  std::sort(run.traces.begin(), run.traces.end());
  return run;
}

}  // namespace memlife::testing
