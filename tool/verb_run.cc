// memlife run: runs a command under the recorder and summarises its traces.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "child_process.h"
#include "run_setup.h"
#include "torch_plugin.h"
#include "trace_summary.h"
#include "verbs.h"

namespace memlife::tool {
namespace {

// A Python command whose torch is not the one the plugin was built for
// gets the plugin built for its torch: from the cache, or built there now
// (once). Where that fails, the command still runs: the preload then
// records without the plugin and the trace says so.
void use_plugin_for_the_running_torch(const std::string& executable, Layout& layout) {
  RecorderLibraries& libs = layout.libs;
  if (libs.plugin_from_env) return;  // the user chose
  const auto python = command_python(executable);
  if (!python) return;
  const auto torch = find_torch(*python);
  if (!torch) return;  // no torch: nothing to record with the plugin
  if (!libs.torch_plugin.empty() && plugin_torch_version(libs.torch_plugin) == torch->version)
    return;
  if (auto cached = cached_plugin(torch->version)) {
    libs.torch_plugin = *cached;
    return;
  }
  if (const char* build = std::getenv("MEMLIFE_BUILD_PLUGIN"); build && std::string(build) == "0")
    return;
  std::string error;
  if (auto built = build_plugin(*python, *torch, layout.plugin_sources, error))
    libs.torch_plugin = *built;
  else
    std::cerr << "memlife run: warning: " << error << "\n";
}

// --print-environment: what `memlife.record()` needs to load the recorder
// into a process that is already running (the same choices a run makes).
void print_environment(const RecorderLibraries& libs, const std::string& output_dir,
                       const EnvVars& env) {
  nlohmann::json out = {{"preload", libs.preload},
                        {"torch_plugin", libs.torch_plugin},
                        {"output_dir", output_dir},
                        {"environment", nlohmann::json::object()}};
  for (const auto& [name, value] : env) out["environment"][name] = value;
  std::cout << out.dump(2) << "\n";
}

int run(RunOptions options) {
  std::string error;
  if (options.output_dir.empty()) options.output_dir = default_output_dir();
  // Every refusal happens before the command starts: a half-started
  // training job is worse than none.
  if (auto bad = check_recorder_variables()) {
    std::cerr << "memlife run: " << *bad << "\n";
    return 2;
  }
  auto executable = find_command(options.command.empty() ? "" : options.command[0], error);
  if (!executable) {
    std::cerr << "memlife run: " << error << "\n";
    return 2;
  }
  auto layout = find_layout(error);
  if (!layout) {
    std::cerr << "memlife run: " << error << "\n";
    return 2;
  }
  auto output_dir = prepare_output_dir(options.output_dir, error);
  if (!output_dir) {
    std::cerr << "memlife run: " << error << "\n";
    return 2;
  }
  use_plugin_for_the_running_torch(*executable, *layout);
  const RecorderLibraries& libs = layout->libs;
  // Never record torch without saying so: the trace also says it
  // (torch_plugin_not_loaded), and `memlife check` refuses it.
  std::error_code plugin_ec;
  if (libs.plugin_from_env && libs.torch_plugin.empty()) {
    std::cerr << "memlife run: warning: torch plugin disabled (MEMLIFE_TORCH_PLUGIN is empty); "
                 "tensors and ops will not be recorded\n";
  } else if (libs.plugin_from_env &&
             !std::filesystem::is_regular_file(libs.torch_plugin, plugin_ec)) {
    std::cerr << "memlife run: warning: MEMLIFE_TORCH_PLUGIN=" << libs.torch_plugin
              << " is not a file; tensors and ops will not be recorded\n";
  } else if (libs.torch_plugin.empty()) {
    std::cerr << "memlife run: warning: no torch plugin next to " << libs.preload
              << "; tensors and ops will not be recorded\n";
  }
  if (layout->python_dir.empty()) {
    std::cerr << "memlife run: warning: memlife's Python package not found (looked in "
                 "<memlife dir>/../share/memlife/python; set MEMLIFE_PYTHON_DIR): "
                 "spawned ranks lose their rank and Work.wait hooks\n";
  }

  const std::string run_id = new_run_id();
  const EnvVars env = recorder_environment(libs, layout->python_dir, *output_dir, run_id, options,
                                           std::getenv("LD_PRELOAD"));
  if (options.print_environment) {
    print_environment(libs, *output_dir, env);
    return 0;
  }
  const int exit_code = run_child(*executable, options.command, env);

  const auto traces = summarize_run(*output_dir, run_id);
  if (traces.empty()) {
    std::cerr << "memlife run: no traces in " << *output_dir
              << " (the command never started the recorder)\n";
  } else {
    std::cerr << "memlife run: " << traces.size() << " trace" << (traces.size() == 1 ? "" : "s")
              << " in " << *output_dir << "\n";
    for (const TraceSummary& s : traces) std::cerr << "memlife run:   " << summary_line(s) << "\n";
  }
  return exit_code;
}

}  // namespace

void register_run_verb(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* verb = app.add_subcommand("run", "Run a command under the memlife recorder");
  verb->add_option("-o,--output", options->output_dir,
                   "Directory for the traces (default: memlife-<YYYYmmdd-HHMMSS>)");
  for (const RecorderOption& o : kRecorderOptions) {
    if (!o.flag) continue;
    const RecorderOption* option = &o;
    verb->add_option(std::string("--") + o.name, options->recorder[o.name], o.help)
        ->check(CLI::Validator(
            [option](std::string& value) {
              return recorder_option_valid(*option, value) ? std::string()
                                                           : recorder_option_expected(*option);
            },
            o.choices != nullptr ? std::string(o.choices) : std::string("INT"), o.name))
        ->capture_default_str();
  }
  verb->add_flag("--print-environment", options->print_environment,
                 "Run nothing: print, as JSON, the recorder library and the environment the "
                 "command would get (memlife.record() loads the recorder with it)");
  // After "--" every word is the command's, even ones that look like
  // memlife options.
  verb->add_option("command", options->command, "The command to run and its arguments, after --");
  verb->footer("Example: memlife run -o traces -- python train.py --lr 0.1");
  verb->callback([options] {
    if (int code = run(*options); code != 0) throw ExitWith{code};
  });
}

}  // namespace memlife::tool
