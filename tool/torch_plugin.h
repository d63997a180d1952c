// The torch plugin for the torch a program actually runs (issue 14). The
// plugin is C++ against libtorch's ABI, so it only loads into the torch it
// was built for (the preload checks its .torch-version). For another torch,
// memlife builds it once from the sources it installs with itself
// (<root>/share/memlife/torch-plugin) into the user's cache, one folder per
// torch version: <cache>/torch-plugin/<version>/libmemlife_torch.so.
#pragma once

#include <optional>
#include <string>

namespace memlife::tool {

struct TorchInstall {
  std::string dir;      // the torch package folder (holds version.py and lib/)
  std::string version;  // __version__ in version.py: what the preload compares
};

// The torch that `python` imports, found without importing it (find_spec,
// then version.py); nullopt when it has none or cannot be asked.
std::optional<TorchInstall> find_torch(const std::string& python);

// The python a command runs: the command itself when its name starts with
// "python", else the interpreter its "#!" line names when that is a python
// (torchrun, accelerate, deepspeed and other console scripts). `command`
// is a resolved path. nullopt when it is not a Python program.
std::optional<std::string> command_python(const std::string& command);

// The torch version a built plugin names in its .torch-version; empty when
// unreadable.
std::string plugin_torch_version(const std::string& plugin);

// $MEMLIFE_CACHE_DIR, else $XDG_CACHE_HOME/memlife, else ~/.cache/memlife;
// then /torch-plugin.
std::string plugin_cache_dir();

// The cached plugin built for `version`, when there is one that says so.
std::optional<std::string> cached_plugin(const std::string& version);

// Builds the plugin for `torch` (the torch of `python`) from `sources`
// into the cache, printing one progress line to stderr first. Returns the
// plugin's path, or nullopt with `error`: one line that says what failed
// and what to run.
std::optional<std::string> build_plugin(const std::string& python, const TorchInstall& torch,
                                        const std::string& sources, std::string& error);

}  // namespace memlife::tool
