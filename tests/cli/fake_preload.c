/* An empty stand-in for libmemlife_preload.so: lets the `memlife run` tests
 * check launching, exit codes and signals without the real recorder. */
int memlife_fake_preload_marker = 1;
