"""The sandbox's command line run for real (akg_harness/jail.py): what a child sees and may do.

Each test starts a small shell command inside the same sandbox a candidate's child gets and looks
at what it could read, write and inherit. Skipped with a message where bubblewrap is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HARNESS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HARNESS_DIR)

from akg_harness.jail import Cgroup, Jail, SandboxError, settings_from_env  # noqa: E402


class SettingsTest(unittest.TestCase):
    def test_defaults_and_overrides(self) -> None:
        s = settings_from_env({"AKG_SANDBOX": '{"memory_mb": 512, "mode": "none"}'})
        self.assertEqual((s["memory_mb"], s["mode"], s["processes"]), (512, "none", 64))

    def test_bad_settings_are_named(self) -> None:
        for raw, phrase in (("{", "not JSON"), ('{"memory": 1}', "unknown field 'memory'"),
                            ('{"mode": "docker"}', "mode must be auto, bwrap or none"),
                            ('{"processes": 0}', "processes must be a positive number")):
            with self.assertRaises(SandboxError) as ctx:
                settings_from_env({"AKG_SANDBOX": raw})
            self.assertIn(phrase, str(ctx.exception))


@unittest.skipIf(shutil.which("bwrap") is None, "bubblewrap (bwrap) is not installed: the sandbox cannot run")
class SandboxViewTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="akg-jail-test-")
        self.kernel_dir = os.path.join(self.dir, "kernel")
        os.mkdir(self.kernel_dir)
        self.secret_file = os.path.join(self.kernel_dir, "reference.py")
        with open(self.secret_file, "w", encoding="utf-8") as f:
            f.write("class Model: pass  # the reference\n")
        self.jail = Jail.create(settings_from_env({"AKG_SANDBOX": '{"mode": "bwrap", "processes": 32}'}))

    def tearDown(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_inside(self, script: str, hide: list = ()) -> subprocess.CompletedProcess:
        cgroup = Cgroup(f"akg-{os.getpid()}-jailtest", 256 << 20, 32)
        env = self.jail.child_env({})
        try:
            cmd = self.jail.command(["/bin/sh", "-c", script], env, self.kernel_dir, HARNESS_DIR, list(hide),
                                    {"c": 0, "t": 20, "f": 1024}, cgroup)
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                                  env=dict(env, AKG_TEST_SECRET="s3cr3t-jail-test"))
        finally:
            cgroup.kill_all()

    def test_masked_reference_reads_empty(self) -> None:
        seen = self.run_inside(f"cat {self.secret_file}; echo end")
        self.assertIn("the reference", seen.stdout)  # visible without masking: the test is real
        masked = self.run_inside(f"cat {self.secret_file}; echo end", hide=[self.secret_file])
        self.assertEqual(masked.stdout.strip(), "end")

    def test_only_tmp_is_writable(self) -> None:
        script = (f"touch {self.kernel_dir}/x 2>/dev/null && echo kernel-writable; "
                  f"touch /usr/x 2>/dev/null && echo usr-writable; "
                  f"mkdir /newdir 2>/dev/null && echo root-writable; "
                  f"touch {HARNESS_DIR}/akg_harness/x 2>/dev/null && echo harness-writable; "
                  "touch /tmp/x && echo tmp-writable")
        out = self.run_inside(script).stdout.split()
        self.assertEqual(out, ["tmp-writable"])

    def test_only_the_view_is_visible(self) -> None:
        # a folder beside the kernel's (as a workspace or a home would be) is not there at all
        other = os.path.join(self.dir, "workspace")
        os.mkdir(other)
        with open(os.path.join(other, "notes.txt"), "w", encoding="utf-8") as f:
            f.write("private\n")
        out = self.run_inside(f"cat {other}/notes.txt 2>/dev/null && echo workspace-visible; "
                              f"ls {HARNESS_DIR}/akg_harness/jail.py >/dev/null && echo package-visible; "
                              f"ls {self.kernel_dir} >/dev/null && echo kernel-visible").stdout.split()
        self.assertEqual(out, ["package-visible", "kernel-visible"])

    def test_environment_is_clean_and_network_absent(self) -> None:
        out = self.run_inside("env; cat /sys/class/net/*/operstate 2>/dev/null; "
                              "ls /proc | grep -c '^[0-9]' ").stdout
        self.assertNotIn("s3cr3t-jail-test", out)
        self.assertNotIn("AKG_TEST_SECRET", out)
        self.assertIn("HOME=/tmp", out)

    def test_no_network_interface_but_loopback(self) -> None:
        out = self.run_inside("cat /proc/net/dev").stdout
        names = [line.split(":")[0].strip() for line in out.splitlines()[2:] if ":" in line]
        self.assertEqual(names, ["lo"])


if __name__ == "__main__":
    unittest.main()
