"""memlife run: refusals before launch, exit statuses, signal forwarding,
the recorder environment and the per-process summary. --lib-dir names the
folder holding libmemlife_preload.so (a stand-in or the real recorder)."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import cli_test_args

ARGS = None


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "out")
        self.env = dict(os.environ, MEMLIFE_LIB_DIR=ARGS.lib_dir)
        self.env.pop("LD_PRELOAD", None)
        # In the asan build memlife and cli_make_trace carry the ASan runtime;
        # a preloaded library ahead of it is what these tests are about.
        asan = self.env.get("ASAN_OPTIONS", "")
        self.env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "verify_asan_link_order=0"

    def tearDown(self):
        self.tmp.cleanup()

    def memlife_run(self, *args, env=None, cwd=None):
        return subprocess.run([ARGS.memlife, "run", *args], capture_output=True, text=True,
                              env=env or self.env, cwd=cwd, timeout=120)

    def assert_refused(self, result, fragment):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("memlife run: "), lines[0])
        self.assertIn(fragment, lines[0])

    def test_refuses_uncreatable_dir_before_launch(self):
        marker = os.path.join(self.tmp.name, "ran")
        blocker = os.path.join(self.tmp.name, "a-file")
        open(blocker, "w").close()
        for bad in (os.path.join(blocker, "sub"), "/proc/memlife-cannot-exist"):
            result = self.memlife_run("-o", bad, "--", "touch", marker)
            self.assert_refused(result, bad)
            self.assertFalse(os.path.exists(marker))

    def test_refuses_read_only_dir(self):
        # Root ignores permission bits, so only a read-only mount is a real
        # test for root; /sys is one on Linux.
        result = self.memlife_run("-o", "/sys", "--", "true")
        self.assert_refused(result, "not writable")

    def test_refuses_missing_command(self):
        result = self.memlife_run("-o", self.out, "--", "memlife-no-such-command", "x")
        self.assert_refused(result, "memlife-no-such-command")
        result = self.memlife_run("-o", self.out, "--", "./no/such/path")
        self.assert_refused(result, "./no/such/path")
        self.assertFalse(os.path.exists(self.out))  # nothing was created

    def test_refuses_missing_preload_library(self):
        env = dict(self.env, MEMLIFE_LIB_DIR=os.path.join(self.tmp.name, "nolib"))
        result = self.memlife_run("-o", self.out, "--", "true", env=env)
        self.assert_refused(result, "preload library not found at")

    def test_exit_status_is_the_commands(self):
        result = self.memlife_run("-o", self.out, "--", "sh", "-c", "exit 3")
        self.assertEqual(result.returncode, 3, result.stderr)
        result = self.memlife_run("-o", self.out, "--", "true")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_killed_command_gives_128_plus_signal(self):
        result = self.memlife_run("-o", self.out, "--", "sh", "-c", "kill -9 $$")
        self.assertEqual(result.returncode, 137, result.stderr)
        result = self.memlife_run("-o", self.out, "--", "sh", "-c", "kill -TERM $$")
        self.assertEqual(result.returncode, 128 + signal.SIGTERM, result.stderr)

    def forwarded(self, sig):
        ready = os.path.join(self.tmp.name, "ready")
        script = ("import signal, sys, time\n"
                  "signal.signal(signal.%s, lambda *a: sys.exit(42))\n"
                  "open(%r, 'w').close()\n"
                  "time.sleep(60)\n" % (signal.Signals(sig).name, ready))
        proc = subprocess.Popen([ARGS.memlife, "run", "-o", self.out, "--", sys.executable, "-c",
                                 script], env=self.env, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not os.path.exists(ready) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        self.assertTrue(os.path.exists(ready), "child never became ready")
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 42, stderr)

    def test_sigterm_is_forwarded(self):
        self.forwarded(signal.SIGTERM)

    def test_sigint_is_forwarded(self):
        self.forwarded(signal.SIGINT)

    def test_child_dies_when_memlife_is_killed(self):
        # Issue 15 item 9: SIGKILL cannot be forwarded; the child must not
        # be left running orphaned.
        pid_file = os.path.join(self.tmp.name, "pid")
        script = ("import os, time\n"
                  "open(%r + '.tmp', 'w').write(str(os.getpid()))\n"
                  "os.rename(%r + '.tmp', %r)\n"
                  "time.sleep(60)\n" % (pid_file, pid_file, pid_file))
        proc = subprocess.Popen([ARGS.memlife, "run", "-o", self.out, "--", sys.executable, "-c",
                                 script], env=self.env, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        deadline = time.time() + 60
        while not os.path.exists(pid_file) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.02)
        self.assertTrue(os.path.exists(pid_file), "child never became ready")
        child = int(open(pid_file).read())
        proc.kill()
        proc.wait(timeout=30)
        deadline = time.time() + 10
        alive = True
        while time.time() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                alive = False
                break
            # A zombie waiting for its new parent's wait() counts as gone.
            try:
                with open("/proc/%d/stat" % child) as f:
                    if f.read().split(") ")[1].startswith("Z"):
                        alive = False
                        break
            except FileNotFoundError:
                alive = False
                break
            time.sleep(0.05)
        if alive:
            os.kill(child, signal.SIGKILL)
        self.assertFalse(alive, "the traced child outlived a SIGKILLed memlife run")

    def test_command_arguments_pass_through_untouched(self):
        args_file = os.path.join(self.tmp.name, "args")
        result = self.memlife_run("-o", self.out, "--", "sh", "-c",
                                  'printf "%s\\n" "$@" > ' + args_file, "sh", "--stacks", "-o",
                                  "--", "two words")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(args_file) as f:
            self.assertEqual(f.read().splitlines(), ["--stacks", "-o", "--", "two words"])

    def child_environment(self, *options, existing_preload=None):
        env_file = os.path.join(self.tmp.name, "env")
        env = dict(self.env)
        if existing_preload:
            env["LD_PRELOAD"] = existing_preload
        result = self.memlife_run("-o", self.out, *options, "--", sh_path(), "-c",
                                  "env > " + env_file, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(env_file) as f:
            return dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)

    def test_recorder_environment(self):
        preload = os.path.join(os.path.realpath(ARGS.lib_dir), "libmemlife_preload.so")
        env = self.child_environment("--stacks", "all", "--max-depth", "7", "--steps", "marks",
                                     existing_preload=preload)
        self.assertEqual(env["LD_PRELOAD"], preload + ":" + preload)
        self.assertEqual(env["MEMLIFE_OUTPUT_DIR"], os.path.realpath(self.out))
        self.assertEqual(env["MEMLIFE_STACKS"], "all")
        self.assertEqual(env["MEMLIFE_MAX_DEPTH"], "7")
        self.assertEqual(env["MEMLIFE_STEPS"], "marks")
        self.assertRegex(env["MEMLIFE_RUN_ID"], r"^\d{8}-\d{6}-[0-9a-f]{8}$")
        plugin = os.path.join(os.path.realpath(ARGS.lib_dir), "libmemlife_torch.so")
        if os.path.exists(plugin):
            self.assertEqual(env["MEMLIFE_TORCH_PLUGIN"], plugin)
        else:
            self.assertNotIn("MEMLIFE_TORCH_PLUGIN", env)

    def test_print_environment_runs_nothing_and_prints_what_a_run_gives(self):
        marker = os.path.join(self.tmp.name, "ran")
        env = dict(self.env)
        env.pop("MEMLIFE_BIN", None)
        result = self.memlife_run("-o", self.out, "--stacks", "all", "--print-environment", "--",
                                  sh_path(), "-c", "touch " + marker, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(os.path.exists(marker))
        printed = json.loads(result.stdout)
        self.assertEqual(printed["preload"], os.path.join(os.path.realpath(ARGS.lib_dir),
                                                          "libmemlife_preload.so"))
        self.assertEqual(printed["output_dir"], os.path.realpath(self.out))
        child = self.child_environment("--stacks", "all")
        for name, value in printed["environment"].items():
            if name != "MEMLIFE_RUN_ID":
                self.assertEqual(child.get(name), value, name)
        self.assertEqual(os.path.realpath(printed["environment"]["MEMLIFE_BIN"]),
                         os.path.realpath(ARGS.memlife))

    def test_default_settings_and_fresh_run_ids(self):
        first = self.child_environment()
        second = self.child_environment()
        self.assertEqual(first["LD_PRELOAD"],
                         os.path.join(os.path.realpath(ARGS.lib_dir), "libmemlife_preload.so"))
        self.assertEqual((first["MEMLIFE_STACKS"], first["MEMLIFE_MAX_DEPTH"],
                          first["MEMLIFE_STEPS"]), ("python", "32", "auto"))
        self.assertNotEqual(first["MEMLIFE_RUN_ID"], second["MEMLIFE_RUN_ID"])

    def test_default_output_dir_is_timestamped(self):
        result = self.memlife_run("--", "true", cwd=self.tmp.name)
        self.assertEqual(result.returncode, 0, result.stderr)
        made = [d for d in os.listdir(self.tmp.name) if re.fullmatch(r"memlife-\d{8}-\d{6}", d)]
        self.assertEqual(len(made), 1, os.listdir(self.tmp.name))

    def test_rejects_bad_option_values(self):
        for args in (("--stacks", "some"), ("--steps", "never"), ("--max-depth", "0"),
                     ("--max-depth", "257")):
            result = self.memlife_run(*args, "--", "true")
            self.assertEqual(result.returncode, 2, args)

    def test_recorder_variables_are_checked_before_the_program_starts(self):
        # Issue 16: one table of recorder options; a bad value of a variable
        # that has no flag is refused, not silently replaced by its default.
        marker = os.path.join(self.tmp.name, "ran")
        for variable, value, expected in (("MEMLIFE_CUPTI", "yes", "one of 0|1"),
                                          ("MEMLIFE_CENSUS_AT_STEPS", "2", "one of 0|1"),
                                          ("MEMLIFE_HOLDERS", "off", "one of 0|1")):
            env = dict(self.env, **{variable: value})
            result = self.memlife_run("--", sh_path(), "-c", "touch " + marker, env=env)
            self.assert_refused(result, f"{variable}={value} is not {expected}")
            self.assertFalse(os.path.exists(marker))
        env = dict(self.env, MEMLIFE_CUPTI="0")
        self.assertEqual(self.memlife_run("-o", self.out, "--", "true", env=env).returncode, 0)

    def test_flags_come_from_the_option_table(self):
        help_text = subprocess.run([ARGS.memlife, "run", "--help"], capture_output=True,
                                   text=True, timeout=60).stdout
        for flag in ("--stacks", "--max-depth", "--steps", "--ops"):
            self.assertIn(flag, help_text)
        result = self.memlife_run("--max-depth", "300", "--", "true")
        self.assertEqual(result.returncode, 2)
        self.assertIn("an integer from 1 to 256", result.stderr)

    def test_summary_line_per_process_of_this_run(self):
        os.makedirs(self.out)
        # A trace of an earlier run in the same directory is not this run's.
        subprocess.run([ARGS.make_trace, os.path.join(self.out, "old-1.mltrace")], check=True)
        script = '"$0" --into-run-dir && "$0" --into-run-dir --no-end && exit 5'
        result = self.memlife_run("-o", self.out, "--", "sh", "-c", script, ARGS.make_trace)
        self.assertEqual(result.returncode, 5, result.stderr)
        lines = [l for l in result.stderr.splitlines() if "warning" not in l]
        self.assertIn("2 traces in " + os.path.realpath(self.out), lines[0])
        per_process = lines[1:]
        self.assertEqual(len(per_process), 2, result.stderr)
        states = sorted(re.search(r"(complete|truncated)", l).group(1) for l in per_process)
        self.assertEqual(states, ["complete", "truncated"])
        for line in per_process:
            self.assertRegex(line, r"pid \d+: \d+ records, \d+ B, ")
        counts = sorted(int(re.search(r"(\d+) records", l).group(1)) for l in per_process)
        self.assertEqual(counts[1], counts[0] + 1)  # the end record


def sh_path():
    return "/bin/sh"


if __name__ == "__main__":
    ARGS, argv = cli_test_args.parse(["--lib-dir"])
    unittest.main(argv=argv, verbosity=2)
