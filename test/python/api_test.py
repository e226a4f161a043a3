"""The Python package against the CLI it wraps: the same policy-file bytes,
the same results, the same one-line errors, and arrays that match
`lull policy dump` row for row.
Usage: PYTHONPATH=BUILD/python api_test.py SOURCE_DIR BUILD_DIR [unittest args]"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

SOURCE, BUILD = sys.argv[1], sys.argv[2]
LULL = os.path.join(BUILD, "lull")
PROFILE = os.path.join(SOURCE, "profiles", "example-synthetic.json")
COMPILE = ["--profiles", PROFILE, "--slo-ms", "100", "--load-qps", "60,100", "--device", "cpu"]

os.environ.pop("LULL_BINARY", None)  # the package must find the build tree's binary itself
import lull  # noqa: E402


def cli(*args):
    return subprocess.run([LULL, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True)


def without_timings(value):
    """A result with its wall-clock fields left out (they differ run to run)."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items()
                if "wall" not in k and "seconds" not in k and k != "compile_s"}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


class Api(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="lull-python-test-")
        cls.dir = cls.tmp.name
        cls.set_path = os.path.join(cls.dir, "set.pb")
        cls.report = lull.compile(profiles=PROFILE, slo_ms=100, workers=4, load_qps=[60, 100], device="cpu",
                                  out=cls.set_path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_finds_the_build_trees_binary(self):
        self.assertEqual(os.path.realpath(lull.binary()), os.path.realpath(LULL))

    def test_compile_writes_the_clis_bytes_and_returns_its_report(self):
        cli_path = os.path.join(self.dir, "cli.pb")
        cli_report = os.path.join(self.dir, "cli.json")
        done = cli("compile", *COMPILE, "--workers", "4", "--out", cli_path, "--report", cli_report)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(cli_path, "rb") as a, open(self.set_path, "rb") as b:
            self.assertEqual(a.read(), b.read())
        with open(cli_report) as f:
            self.assertEqual(without_timings(self.report), without_timings(json.load(f)))
        self.assertEqual([p["load_qps"] for p in self.report["policies"]], [60, 100])

    def test_arrays_match_policy_dump(self):
        done = cli("policy", "dump", self.set_path, "--json", "-")
        self.assertEqual(done.returncode, 0, done.stderr)
        dump = json.loads(done.stdout)
        col = {name: i for i, name in enumerate(dump["columns"])}
        policies = lull.read_policy_set(self.set_path)
        self.assertEqual((policies.task, policies.slo_ms, policies.workers), (dump["task"], 100, 4))
        self.assertEqual(len(policies.policies), len(dump["policies"]))
        for p, d in zip(policies.policies, dump["policies"]):
            self.assertEqual(p.load_qps, d["load_qps"])
            self.assertEqual(p.expected["accuracy"], d["expected_accuracy"])
            self.assertEqual(p.expected["violation_rate"], d["expected_violation_rate"])
            n_max = p.model.shape[0] - 1
            self.assertEqual(p.model.shape, (n_max + 1, len(p.slack_ms)))
            self.assertTrue((p.model[0] == -1).all() and (p.batch[0] == -1).all())
            seen = np.zeros(p.model.shape, dtype=bool)
            for row in d["rows"]:
                n, j, m, b = row[col["n"]], row[col["j"]], row[col["model"]], row[col["batch"]]
                if n == n_max + 1:  # the full-queue state F
                    self.assertEqual((p.overflow_model, p.overflow_batch), (m, b))
                    continue
                self.assertEqual((p.model[n, j], p.batch[n, j]), (m, b), "at n=%d j=%d" % (n, j))
                seen[n, j] = True
            self.assertTrue(seen[1:].all(), "dump rows cover every state with n >= 1")
        self.assertEqual(policies.models, self.report["models"])

    def test_models_and_slack_grid(self):
        with open(PROFILE) as f:
            profile = {m["name"]: m["accuracy"] for m in json.load(f)["models"]}
        policies = lull.read_policy_set(self.set_path)
        for name, accuracy in zip(policies.models, policies.accuracy):
            self.assertEqual(accuracy, profile[name])
        p = policies.policy(100)
        self.assertEqual(p.inputs["intervals"], 100)
        self.assertEqual(len(p.slack_ms), 101)  # FLD: T_0 = 0 .. T_D = SLO in steps of SLO/D
        np.testing.assert_allclose(np.diff(p.slack_ms), 1.0)
        self.assertAlmostEqual(p.slack_ms[-1], 100.0)
        self.assertEqual(policies.latency_ms.shape[0], len(policies.models))
        with self.assertRaises(lull.LullError):
            policies.policy(70)

    def test_library_one_set_per_worker_count(self):
        path = os.path.join(self.dir, "lib.pb")
        lull.compile(profiles=PROFILE, slo_ms=100, workers="2,4", load_qps=[60, 100], device="cpu", out=path)
        sets = lull.read_policy_library(path)
        self.assertEqual([s.workers for s in sets], [2, 4])
        with self.assertRaises(lull.LullError) as e:
            lull.read_policy_set(path)
        self.assertIn("workers 2, 4", str(e.exception))
        four = lull.read_policy_set(path, workers=4)
        alone = lull.read_policy_set(self.set_path)
        for a, b in zip(four.policies, alone.policies):
            np.testing.assert_array_equal(a.model, b.model)
            np.testing.assert_array_equal(a.batch, b.batch)
        self.assertEqual(len(lull.read_policy_library(self.set_path)), 1)  # a set is a library of one

    def test_corrupt_file_raises_naming_it(self):
        with open(self.set_path, "rb") as f:
            data = bytearray(f.read())
        for name, bad in (("flipped.pb", data[:100] + bytes([data[100] ^ 0x40]) + data[101:]),
                          ("truncated.pb", data[: len(data) // 2]),
                          ("empty.pb", b"")):
            path = os.path.join(self.dir, name)
            with open(path, "wb") as f:
                f.write(bad)
            with self.assertRaises(lull.LullError) as e:
                lull.read_policy_set(path)
            self.assertIn(path, str(e.exception))
            self.assertEqual(e.exception.returncode, 2)
            self.assertEqual(str(e.exception), cli("policy", "show", path).stderr.strip().splitlines()[-1])
        with self.assertRaises(lull.LullError) as e:
            lull.read_policy_set(os.path.join(self.dir, "absent.pb"))
        self.assertIn("absent.pb", str(e.exception))

    def test_every_failure_is_a_lull_error(self):
        # Each of these raised TypeError, ValueError, JSONDecodeError or
        # MemoryError before; now LullError, one line naming what is wrong.
        fifo = os.path.join(self.dir, "fifo")
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
        bad_reads = [("/dev/zero", "not a regular file"), (fifo, "not a regular file"), (self.dir, "not a regular file"),
                     (self.set_path + "\0x", "NUL")]
        for path, why in bad_reads:
            with self.assertRaises(lull.LullError) as e:
                lull.read_policy_set(path)
            self.assertIn(why, str(e.exception))
            self.assertNotIn("\n", str(e.exception))
        with self.assertRaises(lull.LullError) as e:
            lull.read_policy_set(self.set_path, workers="4")
        self.assertIn("workers", str(e.exception))
        with self.assertRaises(lull.LullError):
            lull.read_policy_set(self.set_path).policy("60")
        with self.assertRaises(lull.LullError) as e:
            lull.compile(profiles=PROFILE + "\0", slo_ms=100, workers=2, load_qps=60, out=os.path.join(self.dir, "n.pb"))
        self.assertIn("NUL", str(e.exception))
        with self.assertRaises(lull.LullError) as e:
            lull.compile(profiles=PROFILE, slo_ms=100, workers=2, load_qps=60, device="cpu",
                         out=os.path.join(self.dir, "devnull.pb"), report="/dev/null")
        self.assertIn("/dev/null", str(e.exception))

    def test_a_fleet_file_is_not_read_as_an_empty_set(self):
        fleet_desc = os.path.join(self.dir, "fleet.json")
        fleet = os.path.join(self.dir, "fleet.pb")
        with open(fleet_desc, "w") as f:
            json.dump({"kinds": [{"name": "cpu", "profiles": PROFILE, "price_per_s": 1.0}],
                       "classes": [{"name": "a", "slo_ms": 100, "share": 1.0, "workers": {"cpu": 2}}]}, f)
        done = cli("compile", "--fleet", fleet_desc, "--load-qps", "60", "--device", "cpu", "--out", fleet)
        self.assertEqual(done.returncode, 0, done.stderr)
        with self.assertRaises(lull.LullError) as e:
            lull.read_policy_set(fleet)
        self.assertIn("a fleet policy", str(e.exception))

    def test_bad_flags_raise_the_clis_message(self):
        out = os.path.join(self.dir, "never.pb")
        for kwargs, args in (({"slo_ms": -1}, ["--slo-ms", "-1"]), ({"bogus_flag": 3}, ["--bogus-flag", "3"])):
            with self.assertRaises(lull.LullError) as e:
                lull.compile(profiles=PROFILE, workers=4, load_qps=100, out=out, **dict({"slo_ms": 100}, **kwargs))
            base = ["--profiles", PROFILE, "--workers", "4", "--load-qps", "100", "--out", out]
            if "slo_ms" not in kwargs:
                base += ["--slo-ms", "100"]
            done = cli("compile", *base, *args)
            self.assertEqual(done.returncode, 2)
            self.assertEqual(str(e.exception), done.stderr.strip().splitlines()[-1])
            self.assertEqual(e.exception.returncode, 2)
            self.assertFalse(os.path.exists(out))
        self.assertIn("--bogus-flag", str(e.exception))

    def test_simulate_and_plan_return_the_clis_json(self):
        result = lull.simulate(policies=self.set_path, workers=4, trace="constant:100:5", seed=3)
        cli_out = os.path.join(self.dir, "sim.json")
        done = cli("simulate", "--policies", self.set_path, "--workers", "4", "--trace", "constant:100:5",
                   "--seed", "3", "--out", cli_out)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(cli_out) as f:
            self.assertEqual(without_timings(result), without_timings(json.load(f)))
        self.assertGreater(result["queries"], 0)
        plan = lull.plan(profiles=PROFILE, slo_ms=100, max_violation=0.01, load_qps=100, device="cpu")
        cli_out = os.path.join(self.dir, "plan.json")
        done = cli("plan", "--profiles", PROFILE, "--slo-ms", "100", "--max-violation", "0.01", "--load-qps", "100",
                   "--device", "cpu", "--out", cli_out)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(cli_out) as f:
            self.assertEqual(without_timings(plan), without_timings(json.load(f)))

    def test_compile_without_out_writes_a_temp_file_it_returns(self):
        report = lull.compile(profiles=PROFILE, slo_ms=100, workers=4, load_qps=range(50, 101, 50), device="cpu")
        try:
            self.assertTrue(os.path.isfile(report["out"]), report["out"])
            self.assertEqual([p.load_qps for p in lull.read_policy_set(report["out"]).policies], [50, 100])
        finally:
            os.unlink(report["out"])


class Flags(unittest.TestCase):
    def test_keywords_map_one_to_one(self):
        self.assertEqual(lull._cli.flags(slo_ms=150, md=True, all_models=False, task=None, models=["a", "b"],
                                         fail=lull.repeat("0@1:2", "1@3:4"), max_violation=0.1),
                         ["--slo-ms", "150", "--md", "--models", "a,b", "--fail", "0@1:2", "--fail", "1@3:4",
                          "--max-violation", "0.1"])

    def test_a_range_is_its_values(self):
        self.assertEqual(lull._cli.flags(load_qps=range(20, 81, 20)), ["--load-qps", "20,40,60,80"])
        with self.assertRaises(lull.LullError):
            lull._cli.flags(load_qps=range(5, 5))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], *sys.argv[3:]], verbosity=2)
