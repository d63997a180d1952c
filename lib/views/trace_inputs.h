// Turns the command line's inputs (trace files and folders of traces) into
// a sorted list of trace paths.
#pragma once

#include <string>
#include <vector>

namespace memlife::views {

// Folders contribute the *.mltrace files directly inside them, sorted;
// files are taken as given. False with a one-line error when an input is
// missing or nothing is left.
bool expand_trace_inputs(const std::vector<std::string>& inputs, std::vector<std::string>& paths,
                         std::string& error);

}  // namespace memlife::views
