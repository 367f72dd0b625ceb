"""How stable and how distinct failure fingerprints are (issue 12).

    python bench/fingerprints.py                 # real projects, 5 runs each, and the corpus
    python bench/fingerprints.py --runs 3 --json bench/out/fingerprints.json -v

Same failure: small failing projects (Python/pytest, Node, C/gcc, Java, Rust, Perl, Go, Ruby, bash) are built
and run for real here, each run in a fresh temporary directory with its own random port, seed, test order and
timings, and its output wrapped in a randomly chosen CI shape (GitHub, GitLab, Travis, Jenkins, plain; their
timestamps and workspaces differ too). Each run's log is diagnosed by the rules; a run's identity is the set of
its causal failures' fingerprints. A pair of runs of the same failure counts as stable when the sets are equal.

Distinct failures: pairs of runs of different failures, and pairs of different cases of the development corpus
(bench/corpus/cases), collide when their fingerprint sets share any fingerprint (that is what would mislabel a
failure as inherited). Targets: >= 98% of same-failure pairs stable, <= 1% of distinct pairs colliding.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench" / "corpus" / "make"))

from shapes import SHAPES, Step, render  # noqa: E402

from repopilot.ci import diagnose_source  # noqa: E402


@dataclass
class Case:
    name: str
    tool: str  # the program that must exist here
    make: Callable[[Path, random.Random], tuple[dict[str, str], list[list[str]]]]  # files, commands


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the socket is: connecting is refused


def _shuffled(rng: random.Random, parts: list[str]) -> str:
    parts = list(parts)
    rng.shuffle(parts)
    return "\n\n".join(parts) + "\n"


def _py_tests(body: str, rng: random.Random) -> str:
    passing = [f"def test_ok_{i}():\n    time.sleep({rng.random() / 50:.4f})\n    assert {i} == {i}" for i in range(3)]
    return (f"import time, socket, json, os\nSEED = {rng.randint(1, 10**6)}\nprint('seed', SEED)\n\n"
            + _shuffled(rng, [*passing, body]))


PY = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "console_output_style=classic"]


def py_assert(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    return ({"calc.py": "def add(a, b):\n    return a - b\n",
             "test_calc.py": "from calc import add\n" + _py_tests("def test_add():\n    assert add(2, 3) == 5", rng)},
            [PY])


def py_keyerror(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    conf = d / f"conf-{rng.randint(0, 10**9)}.json"
    return ({"conf.py": f"import json\ndef load():\n    return json.load(open({str(conf)!r}))['database']\n",
             "test_conf.py": "from conf import load\n" + _py_tests("def test_load():\n    assert load()", rng),
             conf.name: json.dumps({"port": rng.randint(1000, 9000)})}, [PY])


def py_conn(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    port = _closed_port()
    body = f"def test_service():\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)"
    return {"test_service.py": _py_tests(body, rng)}, [PY]


def py_missing_file(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    body = f"def test_fixture_file(tmp_path):\n    open(tmp_path / 'data-{rng.randint(0, 99999)}.csv').read()"
    return {"test_files.py": _py_tests(body, rng)}, [PY]


def py_import(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    return {"test_imp.py": "import yamlish_not_installed\n" + _py_tests("def test_x():\n    pass", rng)}, [PY]


def py_two(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    bodies = ["def test_parse():\n    assert int('12') == 13", "def test_join():\n    assert ','.join('ab') == 'a;b'"]
    return {"test_two.py": _py_tests(_shuffled(rng, bodies), rng)}, [PY]


def node_assert(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    tests = [f"test('ok {i}', async () => {{ await new Promise(r => setTimeout(r, {rng.randint(1, 30)})); }});"
             for i in range(3)] + ["test('sums', () => { assert.strictEqual(1 + 1, 3); });"]
    src = "const test = require('node:test');\nconst assert = require('node:assert');\n" + _shuffled(rng, tests)
    return {"sum.test.js": src}, [["node", "--test", "sum.test.js"]]


def node_typeerror(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = (f"const seed = {rng.randint(1, 10**6)};\nconsole.log('seed', seed);\n"
           "function total(order) { return order.items.length; }\nconsole.log(total({}));\n")
    return {"app.js": src}, [["node", "app.js"]]


def node_conn(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = (f"const http = require('node:http');\nhttp.get('http://127.0.0.1:{_closed_port()}/health', r => "
           "console.log(r.statusCode)).on('error', e => { console.error(e); process.exit(1); });\n")
    return {"ping.js": src}, [["node", "ping.js"]]


def gcc_undeclared(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    pad = "\n" * rng.randint(0, 5)  # an unrelated edit above the error moves it
    src = f"#include <stdio.h>\n{pad}int main(void) {{\n    printf(\"%d\\n\", countr);\n    return 0;\n}}\n"
    return {"main.c": src}, [["gcc", "-Wall", "-o", "prog", "main.c"]]


def gcc_assert(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = (f"#include <assert.h>\n#include <stdio.h>\nint main(void) {{\n    int seed = {rng.randint(1, 10**6)};\n"
           "    printf(\"seed %d\\n\", seed);\n    int slots = 2;\n    assert(slots == 3);\n    return 0;\n}\n")
    return {"check.c": src}, [["gcc", "-o", "check", "check.c"], ["./check"]]


def javac_symbol(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = ("public class App {\n    public static void main(String[] a) {\n"
           "        System.out.println(sizee);\n    }\n}\n")
    return {"App.java": src}, [["javac", "App.java"]]


def java_npe(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = ("import java.util.*;\npublic class Main {\n    static Map<String, String> conf = new HashMap<>();\n"
           "    public static void main(String[] a) {\n"
           f"        System.out.println(\"seed \" + {rng.randint(1, 10**6)});\n"
           "        System.out.println(conf.get(\"url\").length());\n    }\n}\n")
    return {"Main.java": src}, [["java", "Main.java"]]


def rust_mismatch(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = "fn main() {\n    let n: u32 = \"seven\";\n    println!(\"{}\", n);\n}\n"
    return {"main.rs": src}, [["rustc", "--edition", "2021", "-o", "main", "main.rs"]]


def rust_panic(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    tests = [f"    #[test]\n    fn ok_{i}() {{ std::thread::sleep(std::time::Duration::from_millis("
             f"{rng.randint(1, 20)})); }}" for i in range(3)]
    tests.append("    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 5); }")
    src = "pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[cfg(test)]\nmod tests {\n" + _shuffled(rng, tests) + "}\n"
    return {"lib.rs": src}, [["rustc", "--edition", "2021", "--test", "-o", "t", "lib.rs"], ["./t"]]


def perl_die(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = (f"use strict;\nmy $conf = '{d}/app-{rng.randint(0, 10**6)}.conf';\n"
           "open(my $fh, '<', $conf) or die \"cannot open $conf: $!\";\n")
    return {"run.pl": src}, [["perl", "run.pl"]]


def perl_prove(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    tests = [f"ok(1, 'step {i}');" for i in range(3)] + ["is(join(',', sort qw(b a)), 'b,a', 'sorted names');"]
    return {"t/basic.t": "use Test::More;\n" + _shuffled(rng, tests) + "done_testing();\n"}, [["prove", "t"]]


def go_test(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = ("package calc\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n"
           f"func TestOk(t *testing.T) {{ time.Sleep({rng.randint(1, 30)} * time.Millisecond) }}\n\n"
           "func TestDiv(t *testing.T) {\n\tif got := 7 / 2; got != 4 {\n"
           "\t\tt.Fatalf(\"div: got %d, want 4\", got)\n\t}\n}\n")
    return ({"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc_test.go": src},
            [["go", "test", "-count=1", f"-shuffle={rng.randint(1, 10**6)}", "./..."]])


def ruby_nomethod(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = f"seed = {rng.randint(1, 10**6)}\nputs \"seed #{{seed}}\"\nuser = nil\nputs user.name\n"
    return {"app.rb": src}, [["ruby", "app.rb"]]


def bash_missing(d: Path, rng: random.Random) -> tuple[dict[str, str], list[list[str]]]:
    src = f"set -e\necho \"build {rng.randint(1, 10**6)} in $PWD\"\nprotoc-gen-fake --out build\n"
    return {"build.sh": src}, [["bash", "build.sh"]]


CASES = [Case(f.__name__.replace("_", "-"), tool, f) for tool, f in (
    ("python3", py_assert), ("python3", py_keyerror), ("python3", py_conn), ("python3", py_missing_file),
    ("python3", py_import), ("python3", py_two), ("node", node_assert), ("node", node_typeerror),
    ("node", node_conn), ("gcc", gcc_undeclared), ("gcc", gcc_assert), ("javac", javac_symbol),
    ("java", java_npe), ("rustc", rust_mismatch), ("rustc", rust_panic), ("perl", perl_die), ("prove", perl_prove),
    ("go", go_test), ("ruby", ruby_nomethod), ("bash", bash_missing))]


def run_case(case: Case, rng: random.Random, work: Path) -> str:
    """One real run of the case in a fresh temporary directory; its output wrapped in a random CI shape."""
    d = Path(tempfile.mkdtemp(prefix=f"fp-{case.name}-", dir=work))
    files, commands = case.make(d, rng)
    for name, text in files.items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
    steps = []
    for command in commands:
        done = subprocess.run(command, cwd=d, capture_output=True, text=True, errors="replace", timeout=300,
                              env={"PATH": f"{Path(sys.executable).parent}:/root/.cargo/bin:/usr/local/go/bin:"
                                           "/usr/local/bin:/usr/bin:/bin", "HOME": str(d), "GOCACHE": str(work / "go"),
                                   "GOFLAGS": "-mod=mod", "LANG": "C.UTF-8", "RUSTUP_HOME": "/root/.rustup",
                                   "CARGO_HOME": "/root/.cargo"})
        output = (done.stdout + done.stderr).splitlines()
        steps.append(Step(f"Run {command[0]}", " ".join(command), output, done.returncode))
        if done.returncode:
            break
    shutil.rmtree(d, ignore_errors=True)
    if not steps[-1].exit_code:
        raise SystemExit(f"{case.name}: the run passed; the case must fail")
    text, _, _ = render(steps, rng.choice(SHAPES), job=case.name, seed=rng.randint(0, 10**6))
    return text


def identity(log_text: str, work: Path) -> tuple[str, frozenset[str]]:
    """The run's primary fingerprint (its first identifying failure: the one that explains the job) and the set
    of all its identifying failures' fingerprints."""
    path = work / "run.log"
    path.write_text(log_text)
    failures = diagnose_source(str(path))[0].identifying_failures()
    return failures[0].fingerprint if failures else "", frozenset(f.fingerprint for f in failures)


def _pairs_stable(ids: list[tuple[str, frozenset[str]]], part: int) -> tuple[int, int]:
    pairs = list(itertools.combinations([i[part] for i in ids], 2))
    return sum(a == b for a, b in pairs), len(pairs)


def real_projects(runs: int, seed: int, verbose: bool) -> dict[str, object]:
    rng = random.Random(seed)
    cases = [c for c in CASES if shutil.which(c.tool)]
    missing = [c.name for c in CASES if c not in cases]
    by_case: dict[str, list[tuple[str, frozenset[str]]]] = {}
    with tempfile.TemporaryDirectory(prefix="fp-bench-") as tmp:
        work = Path(tmp)
        for case in cases:
            order = list(range(runs))
            by_case[case.name] = [identity(run_case(case, rng, work), work) for _ in order]
            stable, total = _pairs_stable(by_case[case.name], 1)
            primary, _ = _pairs_stable(by_case[case.name], 0)
            if verbose or min(stable, primary) < total:
                sets = sorted({",".join(sorted(s)) for _, s in by_case[case.name]})
                print(f"  {case.name}: primary {primary}/{total}, sets {stable}/{total} equal; primaries "
                      f"{sorted({p for p, _ in by_case[case.name]})}, sets {sets}", file=sys.stderr)
    figures: dict[str, object] = {"cases": len(cases), "runs_per_case": runs, "missing_tools": missing}
    for part, name in ((0, "primary"), (1, "set")):
        stable = total = 0
        for ids in by_case.values():
            s, t = _pairs_stable(ids, part)
            stable, total = stable + s, total + t
        figures[f"{name}_same_pairs"], figures[f"{name}_stable"] = total, stable
        figures[f"{name}_stable_rate"] = stable / total if total else None
    collide = distinct = 0
    for (_, a), (_, b) in itertools.combinations(by_case.items(), 2):
        for x in a:
            for y in b:
                distinct += 1
                collide += bool(x[1] & y[1])  # any shared fingerprint: strict
    return {**figures, "distinct_pairs": distinct, "distinct_colliding": collide,
            "collision_rate": collide / distinct if distinct else None}


def corpus(verbose: bool) -> dict[str, object]:
    logs = sorted((ROOT / "bench" / "corpus" / "cases").glob("*/*/fail.log"))
    ids: dict[str, frozenset[str]] = {}
    for log in logs:
        ids[f"{log.parent.parent.name}/{log.parent.name}"] = frozenset(
            f.fingerprint for f in diagnose_source(str(log))[0].identifying_failures())
    collide = 0
    pairs = 0
    shown = []
    for (a, x), (b, y) in itertools.combinations(ids.items(), 2):
        pairs += 1
        if x & y:
            collide += 1
            shown.append(f"{a} ~ {b}")
    if verbose:
        for line in shown:
            print(f"  corpus collision: {line}", file=sys.stderr)
    return {"cases": len(ids), "distinct_pairs": pairs, "distinct_colliding": collide,
            "collision_rate": collide / pairs if pairs else None, "collisions": shown}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each real failing project")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    figures: dict[str, object] = {"real": real_projects(args.runs, args.seed, args.verbose)}
    if not args.no_corpus:
        figures["corpus"] = corpus(args.verbose)
    figures["seconds"] = round(time.perf_counter() - started, 1)
    real = figures["real"]
    assert isinstance(real, dict)
    print(f"real projects: {real['cases']} failures x {real['runs_per_case']} runs; same failure, same primary "
          f"fingerprint in {real['primary_stable']}/{real['primary_same_pairs']} pairs "
          f"({real['primary_stable_rate']:.1%}), same set of fingerprints in {real['set_stable']}/"
          f"{real['set_same_pairs']} ({real['set_stable_rate']:.1%}); distinct failures share a fingerprint "
          f"in {real['distinct_colliding']}/{real['distinct_pairs']} pairs ({real['collision_rate']:.2%})"
          + (f"; tools missing here: {', '.join(real['missing_tools'])}" if real["missing_tools"] else ""))
    if "corpus" in figures:
        c = figures["corpus"]
        assert isinstance(c, dict)
        print(f"corpus: {c['cases']} distinct failures; {c['distinct_colliding']}/{c['distinct_pairs']} pairs "
              f"collide ({c['collision_rate']:.3%})")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
