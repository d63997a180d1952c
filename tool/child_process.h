// Runs the traced command as a child and waits for it, the way a shell
// would: the child's exit status becomes ours (128+signal if it was killed),
// and SIGINT/SIGTERM sent to memlife reach the child.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace memlife::tool {

// Runs `executable` with `argv` and the current environment plus `env`
// (replacing variables of the same name). Returns the shell-style exit
// status, or 127 when the exec itself failed (the child says why).
int run_child(const std::string& executable, const std::vector<std::string>& argv,
              const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace memlife::tool
