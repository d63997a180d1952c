// Whether Python code can still reach a tensor, read from the wrapper
// object torch keeps in the TensorImpl's PyObject slot.
#pragma once

#include <cstddef>

namespace memlife::torch_plugin {

using Py_ssize_t_like = std::ptrdiff_t;

// True when no Python code can reach the tensor: it has no Python object,
// or the only reference to that object is the one a TensorImpl keeps on its
// own wrapper while C++ holds the impl (torch >= 2.10 preserves it so).
// Needs the GIL. Where the slot's API is unknown, says false (the tensor
// stays a holder, as before).
template <typename Slot>
bool unreachable_from_python(const Slot* slot) {
  if constexpr (requires { slot->load_pyobj(); }) {
    const void* obj = slot->load_pyobj();
    if (obj == nullptr) return true;
    // ob_refcnt is the object's first field (a Py_ssize_t in CPython).
    return *static_cast<const Py_ssize_t_like*>(obj) <= 1;
  } else {
    return false;
  }
}

// True when the program's Python code had the tensor and let go of it: its
// Python object exists and only the TensorImpl's own reference keeps it.
// A tensor that never had a Python object is C++'s, whose holders memlife
// cannot see: false. Needs the GIL.
template <typename Slot>
bool released_by_python(const Slot* slot) {
  if constexpr (requires { slot->load_pyobj(); }) {
    const void* obj = slot->load_pyobj();
    return obj != nullptr && *static_cast<const Py_ssize_t_like*>(obj) <= 1;
  } else {
    return false;
  }
}

}  // namespace memlife::torch_plugin
