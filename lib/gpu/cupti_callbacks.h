// CUPTI attachment (cupti_callbacks.cc).
#pragma once

namespace memlife::gpu {

// Loads libcupti and subscribes memlife's callbacks, once. Returns true
// when attached (now or before). Safe to call from any thread.
bool attach_cupti();
bool cupti_attached();

}  // namespace memlife::gpu
