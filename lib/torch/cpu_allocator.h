// Records CPU storage allocations and frees by wrapping torch's CPU
// allocator (c10::SetCPUAllocator) and forwarding to the previous one.
#pragma once

namespace memlife::torch_plugin {

// Installs the wrapper once. Storages made before keep their old deleter
// (their frees are not seen).
void install_cpu_allocator();

}  // namespace memlife::torch_plugin
