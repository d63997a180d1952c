#include "torch_plugin.h"

#include "run_setup.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

namespace memlife::tool {
namespace fs = std::filesystem;
namespace {

// Runs argv (no shell) with stdout to `out_fd` (a pipe or a file) and
// stderr to `err_fd`; returns the exit status, -1 when it could not start.
int run_to(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Standard output of argv, or nullopt when it fails.
std::optional<std::string> capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  // The child writes little (a path); read after it exits.
  const int status = run_to(argv, fds[1], devnull < 0 ? STDERR_FILENO : devnull);
  close(fds[1]);
  if (devnull >= 0) close(devnull);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  if (status != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// __version__ = '2.11.0+cu130' -> 2.11.0+cu130, as the preload reads it.
std::string version_from(const fs::path& version_py) {
  std::ifstream in(version_py);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("__version__", 0) != 0) continue;
    const size_t open = line.find_first_of("'\"");
    if (open == std::string::npos) return {};
    const size_t close = line.find(line[open], open + 1);
    return close == std::string::npos ? std::string() : line.substr(open + 1, close - open - 1);
  }
  return {};
}

std::string what_to_run(const std::string& python) {
  return "memlife build-plugin --python " + python;
}

}  // namespace

std::optional<TorchInstall> find_torch(const std::string& python) {
  // find_spec does not import torch (seconds); version.py is what the
  // preload reads when torch loads.
  const auto origin = capture(
      {python, "-c",
       "import importlib.util as u; s = u.find_spec('torch'); print(s.origin if s else '')"});
  if (!origin || origin->empty()) return std::nullopt;
  const fs::path dir = fs::path(*origin).parent_path();
  TorchInstall torch{dir.string(), version_from(dir / "version.py")};
  if (torch.version.empty()) return std::nullopt;
  return torch;
}

std::optional<std::string> command_python(const std::string& command) {
  const std::string name = fs::path(command).filename().string();
  if (name.rfind("python", 0) == 0) return command;
  std::ifstream in(command, std::ios::binary);
  std::string first;
  if (!std::getline(in, first) || first.rfind("#!", 0) != 0) return std::nullopt;
  // "#!/usr/bin/python3", "#!/usr/bin/env python3", "#!/bin/sh" + exec line
  // (pip's long-path form) are not all handled: the first word after #!,
  // or the word after env.
  std::string rest = first.substr(2);
  std::vector<std::string> words;
  for (size_t i = 0; i < rest.size();) {
    const size_t b = rest.find_first_not_of(" \t\r", i);
    if (b == std::string::npos) break;
    const size_t e = rest.find_first_of(" \t\r", b);
    words.push_back(rest.substr(b, e == std::string::npos ? e : e - b));
    i = e == std::string::npos ? rest.size() : e;
  }
  if (words.empty()) return std::nullopt;
  std::string interpreter = words[0];
  if (fs::path(interpreter).filename() == "env" && words.size() > 1) interpreter = words[1];
  if (fs::path(interpreter).filename().string().rfind("python", 0) != 0) return std::nullopt;
  return interpreter;
}

std::string plugin_torch_version(const std::string& plugin) {
  std::ifstream in(plugin + ".torch-version");
  std::string version;
  std::getline(in, version);
  return version;
}

std::string plugin_cache_dir() {
  // NOLINTBEGIN(concurrency-mt-unsafe): read once, before any thread starts
  const char* own = std::getenv("MEMLIFE_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  // NOLINTEND(concurrency-mt-unsafe)
  fs::path root;
  if (own != nullptr && *own != '\0')
    root = own;
  else if (xdg != nullptr && *xdg != '\0')
    root = fs::path(xdg) / "memlife";
  else
    root = fs::path(home != nullptr ? home : "/tmp") / ".cache" / "memlife";
  return (root / "torch-plugin").string();
}

std::optional<std::string> cached_plugin(const std::string& version) {
  const fs::path plugin = fs::path(plugin_cache_dir()) / version / "libmemlife_torch.so";
  std::error_code ec;
  if (!fs::is_regular_file(plugin, ec) || plugin_torch_version(plugin.string()) != version)
    return std::nullopt;
  return plugin.string();
}

std::optional<std::string> build_plugin(const std::string& python, const TorchInstall& torch,
                                        const std::string& sources, std::string& error) {
  std::error_code ec;
  if (sources.empty() || !fs::is_regular_file(fs::path(sources) / "CMakeLists.txt", ec)) {
    error = "cannot build the torch plugin for torch " + torch.version +
            ": this memlife has no plugin sources (share/memlife/torch-plugin); reinstall "
            "memlife against this torch (pip install --no-build-isolation .)";
    return std::nullopt;
  }
  for (const char* tool : {"cmake", "c++"}) {
    if (std::string not_found; !find_command(tool, not_found)) {
      error = std::string("cannot build the torch plugin for torch ") + torch.version + ": no " +
              tool + " on PATH; install cmake and a C++ compiler (Debian: apt-get install cmake " +
              "g++), then run: " + what_to_run(python);
      return std::nullopt;
    }
  }
  const fs::path dir = fs::path(plugin_cache_dir()) / torch.version;
  const fs::path build = dir / "build";
  fs::create_directories(build, ec);
  if (ec) {
    error = "cannot create " + build.string() + ": " + ec.message();
    return std::nullopt;
  }
  const fs::path log = dir / "build.log";
  std::cerr << "memlife: building the torch plugin for torch " << torch.version
            << " (once, a few minutes; log: " << log.string() << ")" << std::endl;
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    error = "cannot write " + log.string();
    return std::nullopt;
  }
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  int status = run_to({"cmake", "-S", sources, "-B", build.string(),
                       "-DPython3_EXECUTABLE=" + python, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"},
                      log_fd, log_fd);
  if (status == 0)
    status =
        run_to({"cmake", "--build", build.string(), "-j", std::to_string(jobs)}, log_fd, log_fd);
  close(log_fd);
  const fs::path built = build / "lib" / "libmemlife_torch.so";
  if (status != 0 || !fs::is_regular_file(built, ec)) {
    error = "building the torch plugin for torch " + torch.version + " failed (see " +
            log.string() + "); after fixing it, run: " + what_to_run(python);
    return std::nullopt;
  }
  // Copied, then the version file last: a half-copied plugin is never
  // taken for a built one (cached_plugin checks the version file).
  const fs::path plugin = dir / "libmemlife_torch.so";
  fs::copy_file(built, plugin, fs::copy_options::overwrite_existing, ec);
  if (!ec)
    fs::copy_file(fs::path(built.string() + ".torch-version"), plugin.string() + ".torch-version",
                  fs::copy_options::overwrite_existing, ec);
  // The CUDA allocator tracker goes next to it, where it was built.
  if (const fs::path cuda = build / "lib" / "libmemlife_torch_cuda.so";
      !ec && fs::is_regular_file(cuda, ec))
    fs::copy_file(cuda, dir / cuda.filename(), fs::copy_options::overwrite_existing, ec);
  if (ec || plugin_torch_version(plugin.string()) != torch.version) {
    error = "the torch plugin built in " + build.string() + " is not for torch " + torch.version +
            " (" + (ec ? ec.message() : plugin_torch_version(plugin.string())) + ")";
    return std::nullopt;
  }
  return plugin.string();
}

}  // namespace memlife::tool
