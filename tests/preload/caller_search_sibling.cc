// A library found only next to the one that opens it (see
// caller_search_loader.cc).
extern "C" __attribute__((visibility("default"))) int caller_search_sibling_answer() { return 914; }
