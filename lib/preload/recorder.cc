// Recorder lifecycle: settings, the trace file, per-thread writers, the
// background writer thread, fork handling and shutdown.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "format/file_layout.h"
#include "memlife/memlife.h"
#include "memlife/recorder_options.h"
#include "preload/fatal_signals.h"
#include "preload/recorder_state.h"

namespace memlife::rec {
namespace {

Settings g_settings;
PluginHooks g_plugin;
std::atomic<int> g_phase{static_cast<int>(Phase::kInert)};
std::atomic<uint64_t> g_seq{0};
std::atomic<uint64_t> g_ids{0};
std::atomic<uint64_t> g_streams{0};
std::atomic<uint64_t> g_step{0};
// The strongest StepSource that has marked a step, and the last one's
// (kNoStepYet before the first).
constexpr uint8_t kNoStepYet = 0xff;
std::atomic<uint8_t> g_strongest_step_source{0};
std::atomic<uint8_t> g_last_step_source{kNoStepYet};
// Backward passes running now, in any thread, and whether an optimizer
// stepped inside them.
std::atomic<int> g_backward_passes{0};
std::atomic<bool> g_optimizer_stepped_in_backward{false};
std::atomic<ThreadWriter*> g_writers{nullptr};

std::mutex g_start_mutex;
std::mutex g_flush_mutex;  // one drainer at a time: writer thread or flush()

int g_fd = -1;
// The trace file g_fd was opened on: a program that closes every descriptor
// it did not open (daemons, some launchers) and opens its own file may get
// g_fd's number for it; the writer checks before each write (issue 15).
dev_t g_trace_dev = 0;
ino_t g_trace_ino = 0;
pid_t g_owner_pid = 0;
char g_output_dir[4096];
char g_trace_path[4096];
bool g_write_failed = false;
uint64_t g_bytes_written = 0;

pthread_t g_writer_thread;
bool g_writer_started = false;
pthread_mutex_t g_wake_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_wake_cond;
bool g_stop_writer = false;
pthread_key_t g_thread_key;

// The writer flushes at least this often, so a SIGKILL loses at most about
// this much time of records (plus what is in flight).
constexpr long kFlushIntervalNs = 50'000'000;
// Producers wake the writer early once this many blocks wait (1 MiB).
constexpr size_t kWakeBlocks = 4;

thread_local ThreadWriter* tls_writer __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local bool tls_in_recorder __attribute__((tls_model("initial-exec"))) = false;

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once at start
  return (v != nullptr && *v != '\0') ? v : fallback;
}

}  // namespace

const char* option_value(std::string_view name) {
  const RecorderOption* o = find_recorder_option(name);
  if (o == nullptr) return "";
  const char* v = std::getenv(o->variable);  // NOLINT(concurrency-mt-unsafe)
  if (v == nullptr || *v == '\0') return o->default_value;
  if (recorder_option_valid(*o, v)) return v;
  std::fprintf(stderr, "memlife: %s=%s is not %s; using %s\n", o->variable, v,
               recorder_option_expected(*o).c_str(), o->default_value);
  return o->default_value;
}

namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long parsed = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? parsed : fallback;
}

StackMode parse_stacks(const char* s) {
  if (std::strcmp(s, "none") == 0) return StackMode::kNone;
  if (std::strcmp(s, "native") == 0) return StackMode::kNative;
  if (std::strcmp(s, "all") == 0) return StackMode::kAll;
  return StackMode::kPython;
}

uint64_t wall_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void warn_once_write_failure(int err) {
  if (g_write_failed) return;
  g_write_failed = true;
  char line[4400];
  const int n =
      std::snprintf(line, sizeof(line),
                    "memlife: cannot write %s (%s); the trace is incomplete from here "
                    "on, the program keeps running\n",
                    g_trace_path, std::strerror(err));  // NOLINT(concurrency-mt-unsafe): once
  if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(n));
}

// Moves `fd` to a number >= kHighFd, out of the way of programs that
// assume small numbers are theirs; keeps `fd` if that fails.
constexpr int kHighFd = 1000;
int move_high(int fd) {
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
  if (high < 0) return fd;
  ::close(fd);
  return high;
}

// True when g_fd is still the trace file this process opened.
bool fd_is_trace() {
  struct stat st {};
  return g_fd >= 0 && ::fstat(g_fd, &st) == 0 && st.st_dev == g_trace_dev &&
         st.st_ino == g_trace_ino;
}

// The program closed g_fd (and may have opened its own file under that
// number): forget the number without closing it, reopen the trace by path
// and append. False when the trace cannot be reopened.
bool reopen_trace() {
  g_fd = -1;
  const int fd = ::open(g_trace_path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != g_trace_dev || st.st_ino != g_trace_ino) {
    ::close(fd);  // someone replaced the trace: write nothing into another file
    errno = ESTALE;
    return false;
  }
  g_fd = move_high(fd);
  return true;
}

// Closes g_fd only if it is still ours: never a descriptor of the program.
void close_trace_fd() {
  if (fd_is_trace()) ::close(g_fd);
  g_fd = -1;
}

void write_chunk(uint64_t stream_id, const uint8_t* data, size_t bytes, bool sync) {
  if (g_fd < 0 || g_write_failed) return;
  if (!fd_is_trace() && !reopen_trace()) {
    warn_once_write_failure(errno);
    return;
  }
  uint8_t prefix[format::kChunkPrefixBound];
  const size_t prefix_bytes = format::encode_chunk_prefix(prefix, stream_id, sync, data, bytes);
  iovec parts[2] = {{prefix, prefix_bytes}, {const_cast<uint8_t*>(data), bytes}};
  size_t total = prefix_bytes + bytes;
  size_t done = 0;
  while (done < total) {
    // Rebuild the iovec for partial writes.
    iovec rest[2];
    int count = 0;
    size_t skip = done;
    for (const iovec& part : parts) {
      if (skip >= part.iov_len) {
        skip -= part.iov_len;
        continue;
      }
      rest[count].iov_base = static_cast<uint8_t*>(part.iov_base) + skip;
      rest[count].iov_len = part.iov_len - skip;
      skip = 0;
      ++count;
    }
    const ssize_t n = ::writev(g_fd, rest, count);
    if (n < 0) {
      if (errno == EINTR) continue;
      // Closed between the check and the write: reopen and go on.
      if (errno == EBADF && reopen_trace()) continue;
      warn_once_write_failure(errno);
      return;
    }
    done += static_cast<size_t>(n);
  }
  g_bytes_written += total;
}

void drain_all_locked(bool recycle = true) {
  for (ThreadWriter* w = g_writers.load(std::memory_order_acquire); w != nullptr;
       w = w->next_registered) {
    w->drain([w](const uint8_t* data, size_t bytes,
                 bool sync) { write_chunk(w->stream_id(), data, bytes, sync); },
             recycle);
  }
}

void* writer_main(void*) {
  tls_in_recorder = true;  // nothing this thread does is recorded
  pthread_mutex_lock(&g_wake_mutex);
  while (!g_stop_writer) {
    timespec deadline{};
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += kFlushIntervalNs;
    if (deadline.tv_nsec >= 1'000'000'000) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1'000'000'000;
    }
    pthread_cond_timedwait(&g_wake_cond, &g_wake_mutex, &deadline);
    pthread_mutex_unlock(&g_wake_mutex);
    {
      std::lock_guard<std::mutex> lock(g_flush_mutex);
      drain_all_locked();
    }
    pthread_mutex_lock(&g_wake_mutex);
  }
  pthread_mutex_unlock(&g_wake_mutex);
  return nullptr;
}

void on_thread_exit(void* writer) {
  // The writer keeps draining what the thread left; the stream simply ends.
  static_cast<ThreadWriter*>(writer)->exited.store(true, std::memory_order_release);
}

bool open_trace_file() {
  char host[256] = "unknown";
  gethostname(host, sizeof(host) - 1);
  const pid_t pid = getpid();
  const int64_t rank = env_int("RANK", -1);
  char rank_part[32] = "";
  if (rank >= 0)
    std::snprintf(rank_part, sizeof(rank_part), "-r%lld", static_cast<long long>(rank));
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[16] = "";
    if (attempt > 0) std::snprintf(suffix, sizeof(suffix), ".%d", attempt);
    std::snprintf(g_trace_path, sizeof(g_trace_path), "%s/%s-%d%s%s.mltrace", g_output_dir, host,
                  static_cast<int>(pid), rank_part, suffix);
    // Traces hold paths and stack contents: readable by their owner only.
    g_fd = ::open(g_trace_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0600);
    if (g_fd >= 0 || errno != EEXIST) break;
  }
  if (g_fd >= 0) {
    g_fd = move_high(g_fd);
    struct stat st {};
    ::fstat(g_fd, &st);
    g_trace_dev = st.st_dev;
    g_trace_ino = st.st_ino;
  }
  if (g_fd < 0) {
    char line[4400];
    const int n =
        std::snprintf(line, sizeof(line), "memlife: cannot create %s (%s); not recording\n",
                      g_trace_path, std::strerror(errno));  // NOLINT(concurrency-mt-unsafe)
    if (n > 0) (void)!::write(STDERR_FILENO, line, static_cast<size_t>(n));
    return false;
  }

  char cmdline[4096] = "";
  size_t cmd_len = 0;
  const int cmd_fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (cmd_fd >= 0) {
    const ssize_t n = ::read(cmd_fd, cmdline, sizeof(cmdline) - 1);
    ::close(cmd_fd);
    if (n > 0) {
      cmd_len = static_cast<size_t>(n);
      for (size_t i = 0; i < cmd_len; ++i) {
        if (cmdline[i] == '\0') cmdline[i] = ' ';
      }
      while (cmd_len > 0 && cmdline[cmd_len - 1] == ' ') --cmd_len;
    }
  }
  format::HeaderFields header;
  header.producer_major = MEMLIFE_VERSION_MAJOR;
  header.producer_minor = MEMLIFE_VERSION_MINOR;
  header.producer_patch = MEMLIFE_VERSION_PATCH;
  header.pid = static_cast<uint64_t>(pid);
  header.ppid = static_cast<uint64_t>(getppid());
  header.rank = rank;
  header.local_rank = env_int("LOCAL_RANK", -1);
  header.world_size = env_int("WORLD_SIZE", -1);
  header.host = host;
  header.run_id = env_or("MEMLIFE_RUN_ID", "");
  header.start_monotonic_ns = now_ns();
  header.start_wall_ns = wall_ns();
  header.command_line = std::string_view(cmdline, cmd_len);
  const std::vector<uint8_t> bytes = format::encode_file_header(header);
  if (!format::write_fully(g_fd, bytes.data(), bytes.size())) {
    warn_once_write_failure(errno);
  }
  g_bytes_written = bytes.size();
  return true;
}

void start_writer_thread() {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&g_wake_cond, &attr);
  pthread_condattr_destroy(&attr);
  g_stop_writer = false;
  // The writer thread must not inherit a signal mask that lets the
  // program's signals land on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_writer_started = pthread_create(&g_writer_thread, nullptr, writer_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ThreadWriter* create_thread_writer() {
  void* memory = ::mmap(nullptr, sizeof(ThreadWriter), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  const auto tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  auto* w = new (memory) ThreadWriter(g_streams.fetch_add(1) + 1, tid);
  if (!w->usable()) return nullptr;  // leaked mapping: only when memory is exhausted
  ThreadWriter* head = g_writers.load(std::memory_order_relaxed);
  do {
    w->next_registered = head;
  } while (!g_writers.compare_exchange_weak(head, w, std::memory_order_release,
                                            std::memory_order_relaxed));
  pthread_setspecific(g_thread_key, w);
  return w;
}

}  // namespace

std::atomic<int>& phase() { return g_phase; }
bool& in_recorder() { return tls_in_recorder; }
const Settings& settings() { return g_settings; }
bool active() {
  return g_phase.load(std::memory_order_acquire) == static_cast<int>(Phase::kRunning);
}

const char* trace_path() { return active() ? g_trace_path : ""; }

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t next_id() { return g_ids.fetch_add(1, std::memory_order_relaxed) + 1; }
uint64_t next_seq() { return g_seq.fetch_add(1, std::memory_order_relaxed) + 1; }

void init_from_environment() {
  const char* dir = std::getenv("MEMLIFE_OUTPUT_DIR");  // NOLINT(concurrency-mt-unsafe)
  if (dir == nullptr || *dir == '\0') return;           // not under `memlife run`: stay inert
  std::snprintf(g_output_dir, sizeof(g_output_dir), "%s", dir);
  g_settings.stacks = parse_stacks(option_value("stacks"));
  // Checked against the table's range by option_value.
  g_settings.max_depth =
      static_cast<uint32_t>(std::strtoul(option_value("max-depth"), nullptr, 10));
  g_settings.steps_from_optimizer = std::strcmp(option_value("steps"), "marks") != 0;
  g_settings.census_at_steps = option_on("census-at-steps");
  g_settings.nested_ops = std::strcmp(option_value("ops"), "all") == 0;
  pthread_key_create(&g_thread_key, on_thread_exit);
  g_owner_pid = getpid();
  g_phase.store(static_cast<int>(Phase::kArmed), std::memory_order_release);
}

bool ensure_started() {
  const int p = g_phase.load(std::memory_order_acquire);
  if (p == static_cast<int>(Phase::kRunning)) return true;
  if (p != static_cast<int>(Phase::kArmed)) return false;
  std::lock_guard<std::mutex> lock(g_start_mutex);
  if (g_phase.load() == static_cast<int>(Phase::kRunning)) return true;
  if (g_phase.load() != static_cast<int>(Phase::kArmed)) return false;
  if (!open_trace_file()) {
    g_phase.store(static_cast<int>(Phase::kInert));
    return false;
  }
  start_writer_thread();
  g_phase.store(static_cast<int>(Phase::kRunning), std::memory_order_release);
  install_termination_signal_handler();
  return true;
}

ThreadWriter* current_thread_writer() {
  ThreadWriter* w = tls_writer;
  const int p = g_phase.load(std::memory_order_acquire);
  if (p == static_cast<int>(Phase::kRunning)) {
    if (w != nullptr) return w;
  } else if (p != static_cast<int>(Phase::kArmed) || !ensure_started()) {
    return nullptr;
  }
  w = create_thread_writer();
  tls_writer = w;
  if (w == nullptr) return nullptr;
  char name[64] = "";
  pthread_getname_np(pthread_self(), name, sizeof(name));
  emit(*w, format::ThreadRecord{w->tid(), name});
  if (w->stream_id() == 1) emit_new_modules(*w);
  return w;
}

uint8_t* reserve(ThreadWriter& w, size_t max_bytes) {
  const size_t in_flight_before = blocks_in_flight();
  uint8_t* out = w.reserve(max_bytes);
  if (blocks_in_flight() > in_flight_before && in_flight_before + 1 >= kWakeBlocks) {
    pthread_cond_signal(&g_wake_cond);
  }
  return out;
}

void commit(ThreadWriter& w, uint8_t* end) { w.commit(end); }
format::StreamState& stream_state(ThreadWriter& w) { return w.state(); }

void emit_segment(bool is_alloc, const format::SegmentRecord& record) {
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return;
  uint8_t* out = reserve(*w, format::bound_bytes(record));
  commit(*w, format::encode_segment(out, w->state(), is_alloc, next_seq(), now_ns(), record));
}

ReentryGuard::ReentryGuard() : entered_(!tls_in_recorder) { tls_in_recorder = true; }
ReentryGuard::~ReentryGuard() {
  if (entered_) tls_in_recorder = false;
}

void register_plugin(const PluginHooks& hooks) { g_plugin = hooks; }
const PluginHooks& plugin() { return g_plugin; }

uint64_t current_step() { return g_step.load(std::memory_order_relaxed); }

bool step_source_outranked(StepSource source) {
  return g_strongest_step_source.load(std::memory_order_relaxed) > static_cast<uint8_t>(source);
}

void restart_step_sources() {
  g_strongest_step_source.store(0, std::memory_order_relaxed);
  g_last_step_source.store(kNoStepYet, std::memory_order_relaxed);
}

bool mark_step(std::string_view label, StepSource source) {
  const auto strength = static_cast<uint8_t>(source);
  const uint8_t strongest = g_strongest_step_source.load(std::memory_order_relaxed);
  if (strength < strongest) return false;
  const uint8_t last = g_last_step_source.exchange(strength, std::memory_order_relaxed);
  if (strength > strongest) {
    g_strongest_step_source.store(strength, std::memory_order_relaxed);
    // A stronger source's first step closes the iteration a weaker one's
    // step may already have closed: that step was this iteration's.
    if (last != kNoStepYet) return false;
  }
  ThreadWriter* w = current_thread_writer();
  if (w == nullptr) return false;
  const uint64_t step = g_step.fetch_add(1) + 1;
  format::MarkRecord mark;
  mark.kind = MarkKind::kStep;
  mark.step = step;
  mark.label_string = label.empty() ? 0 : intern_string(label);
  mark.stack_id = capture_stack(*w, 1);
  emit(*w, mark);
  if (g_plugin.census != nullptr && g_settings.census_at_steps) {
    g_plugin.census(CensusReason::kStep);
  }
  return true;
}

void optimizer_stepped(std::string_view label) {
  if (g_backward_passes.load(std::memory_order_acquire) > 0) {
    g_optimizer_stepped_in_backward.store(true, std::memory_order_release);
    return;
  }
  mark_step(label, StepSource::kOptimizer);
}

void backward_pass_began() { g_backward_passes.fetch_add(1, std::memory_order_acq_rel); }

void backward_pass_ended() {
  int running = g_backward_passes.load(std::memory_order_acquire);
  // An end without its begin (a block recorded from inside a backward
  // pass) leaves the count at zero.
  while (running > 0 && !g_backward_passes.compare_exchange_weak(running, running - 1)) {
  }
  if (running == 1 && g_optimizer_stepped_in_backward.exchange(false, std::memory_order_acq_rel))
    mark_step(MEMLIFE_OPTIMIZER_STEPS_IN_BACKWARD_LABEL, StepSource::kOptimizer);
}

void set_process_identity(int64_t rank, int64_t local_rank, int64_t world_size,
                          std::string_view torch_version, std::string_view note) {
  emit(format::ProcessRecord{rank, local_rank, world_size, torch_version, note});
}

void flush() {
  if (!active()) return;
  std::lock_guard<std::mutex> lock(g_flush_mutex);
  drain_all_locked();
}

void shutdown(uint64_t exit_status, bool from_signal) {
  if (getpid() != g_owner_pid) return;  // a vfork/clone child sharing our memory
  if (g_phase.load() != static_cast<int>(Phase::kRunning)) {
    g_phase.store(static_cast<int>(Phase::kClosed));
    return;
  }
  {
    ReentryGuard guard;
    if (ThreadWriter* w = current_thread_writer()) {
      uint64_t dropped = 0;
      for (ThreadWriter* t = g_writers.load(); t != nullptr; t = t->next_registered) {
        dropped += t->records_dropped;
      }
      // Records dropped when no buffer memory could be had: say how many.
      if (dropped > 0) emit(*w, format::LostRecord{dropped, 0});
      emit(*w, format::EndRecord{exit_status, from_signal ? kEndSignal : 0u});
    }
  }
  g_phase.store(static_cast<int>(Phase::kClosed), std::memory_order_release);
  if (g_writer_started && !from_signal) {
    pthread_mutex_lock(&g_wake_mutex);
    g_stop_writer = true;
    pthread_cond_signal(&g_wake_cond);
    pthread_mutex_unlock(&g_wake_mutex);
    pthread_join(g_writer_thread, nullptr);
    g_writer_started = false;
  }
  std::lock_guard<std::mutex> lock(g_flush_mutex);
  drain_all_locked();
  close_trace_fd();
}

void flush_before_exec() {
  if (getpid() != g_owner_pid || !active()) return;
  ReentryGuard guard;
  std::lock_guard<std::mutex> lock(g_flush_mutex);
  drain_all_locked();
}

void flush_from_fatal_signal() {
  if (!active() || getpid() != g_owner_pid) return;
  // The writer thread may be mid-flush; it finishes within one write. Give
  // it up to ~50 ms, then write anyway rather than lose everything.
  for (int i = 0; i < 50; ++i) {
    if (g_flush_mutex.try_lock()) {
      drain_all_locked(/*recycle=*/false);
      g_flush_mutex.unlock();
      return;
    }
    struct timespec ms = {0, 1'000'000};
    nanosleep(&ms, nullptr);
  }
}

// Fork: the child must not inherit a lock another thread held, a writer
// thread it does not have, or the parent's open trace. Locks are taken in
// one order: start, flush, modules, strings, block pool (the module map and
// the string table emit records while holding theirs, which may take the
// pool's).

void before_fork() {
  if (g_plugin.before_fork != nullptr) g_plugin.before_fork();
  g_start_mutex.lock();
  g_flush_mutex.lock();
  lock_modules_for_fork();
  lock_strings_for_fork();
  lock_pool_for_fork();
}

void after_fork_parent() {
  unlock_pool_after_fork();
  unlock_strings_after_fork();
  unlock_modules_after_fork();
  g_flush_mutex.unlock();
  g_start_mutex.unlock();
  if (g_plugin.after_fork_parent != nullptr) g_plugin.after_fork_parent();
}

void after_fork_child() {
  unlock_pool_after_fork();
  unlock_strings_after_fork();
  unlock_modules_after_fork();
  g_flush_mutex.unlock();
  g_start_mutex.unlock();
  // The parent's buffers stay mapped but unreachable: the child writes a
  // trace of its own, from its own first record on.
  g_writers.store(nullptr);
  tls_writer = nullptr;
  g_streams.store(0);
  // The child's threads run no backward pass of the parent's.
  g_backward_passes.store(0);
  g_optimizer_stepped_in_backward.store(false);
  g_writer_started = false;
  close_trace_fd();
  g_write_failed = false;
  g_owner_pid = getpid();
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  g_wake_mutex = fresh;
  reset_string_table_after_fork();
  reset_modules_after_fork();
  if (g_plugin.after_fork_child != nullptr) g_plugin.after_fork_child();
  if (g_phase.load() == static_cast<int>(Phase::kRunning)) {
    g_phase.store(static_cast<int>(Phase::kArmed));
  }
}

}  // namespace memlife::rec
