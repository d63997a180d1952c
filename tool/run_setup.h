// Everything `memlife run` checks and decides before it launches anything:
// the output directory, the command, the recorder libraries and the
// environment the recorder reads. Each check fails with one line to print.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memlife/recorder_options.h"

namespace memlife::tool {

struct RunOptions {
  std::string output_dir;  // empty: memlife-<YYYYmmdd-HHMMSS> in the cwd
  // The `memlife run` flags of kRecorderOptions, by name (defaults filled).
  std::map<std::string, std::string> recorder = recorder_flag_defaults();
  std::vector<std::string> command;
  // --print-environment: print what the command would get, run nothing.
  bool print_environment = false;

  static std::map<std::string, std::string> recorder_flag_defaults() {
    std::map<std::string, std::string> values;
    for (const RecorderOption& o : kRecorderOptions)
      if (o.flag) values[o.name] = o.default_value;
    return values;
  }
};

// The recorder options set through their variables only, checked in this
// process's environment: one line naming the first bad one, or nullopt.
std::optional<std::string> check_recorder_variables();

struct RecorderLibraries {
  std::string preload;       // absolute path of libmemlife_preload.so
  std::string torch_plugin;  // absolute path of libmemlife_torch.so; empty if absent
  // $MEMLIFE_TORCH_PLUGIN was set: torch_plugin is its value (empty: disabled).
  bool plugin_from_env = false;
};

using EnvVars = std::vector<std::pair<std::string, std::string>>;

// memlife-<YYYYmmdd-HHMMSS>, local time.
std::string default_output_dir();
// <YYYYmmdd-HHMMSS>-<8 hex digits>: unique enough to tell runs apart when
// several share one output directory.
std::string new_run_id();

// Creates `dir` (and parents) if needed and proves it writable by creating
// and removing a probe file. Returns its absolute path, or nullopt with
// `error` set.
std::optional<std::string> prepare_output_dir(const std::string& dir, std::string& error);

// The executable execvp would run for `name`: `name` itself when it holds a
// slash, else the first executable regular file of that name on PATH.
std::optional<std::string> find_command(const std::string& name, std::string& error);

// Where memlife's own files are, found from the memlife executable: the
// one lookup for a build tree, a `cmake --install` prefix and a pip
// install, which share one layout: <root>/bin/memlife, the recorder
// libraries in <root>/lib and the `memlife` Python package (with its
// autoload sitecustomize) in <root>/share/memlife/python.
// $MEMLIFE_LIB_DIR and $MEMLIFE_PYTHON_DIR override the two folders.
struct Layout {
  RecorderLibraries libs;
  std::string python_dir;  // holds memlife/__init__.py; empty if not found
  // <root>/share/memlife/torch-plugin: the plugin's sources as a CMake
  // project (tool/torch_plugin.h); empty if not found.
  std::string plugin_sources;
};

// The preload library is required (nullopt with `error` set without it);
// the torch plugin is optional (a build without torch records allocations
// only) and so is the Python package (the caller warns).
std::optional<Layout> find_layout(std::string& error);

// The variables the recorder reads, with LD_PRELOAD put in front of
// `existing_ld_preload` (may be null). `python_dir` (may be empty) goes in
// front of PYTHONPATH with its memlife/autoload folder.
EnvVars recorder_environment(const RecorderLibraries& libs, const std::string& python_dir,
                             const std::string& output_dir, const std::string& run_id,
                             const RunOptions& options, const char* existing_ld_preload);

}  // namespace memlife::tool
