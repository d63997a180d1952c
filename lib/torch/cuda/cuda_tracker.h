// The CUDA caching-allocator trace tracker (libmemlife_torch_cuda.so).
// Loaded by the preload (lib/gpu, memlife_torch_cuda_attach_if_ready) only
// when libc10_cuda is in the process, so a CPU-only torch run never pulls
// in CUDA libraries.
#pragma once

#include <cstdint>

// Attaches the tracker to torch's CUDA caching allocator if it is
// initialised. Returns 1 when attached (now or before), 0 when not ready
// yet (call again later), -1 when it can never attach (another allocator
// backend, e.g. cudaMallocAsync). `current_op_name` gives the calling
// thread's innermost open op (interned name id); may be null.
extern "C" int memlife_torch_cuda_try_attach(uint64_t (*current_op_name)());
