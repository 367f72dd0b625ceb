"""Go cases: go build errors, go test failures (assertions, subtests, panics, -race, timeouts, fuzzing, examples),
go vet, gofmt -l, go mod tidy drift, modules missing with GOPROXY=off, a go.mod that does not parse, a full disk.

A module with three packages (`money`, `ledger`, `cmd/ledger`) and no dependencies outside the standard
library; every case breaks one thing and runs the go tool offline."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

ECO = "go"
GO = version("go version")
ENV = {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GO111MODULE": "on", "GOTOOLCHAIN": "local"}

GOMOD = "module example.com/ledger\n\ngo 1.19\n"
MONEY = """
package money

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Cents is an amount of money in cents.
type Cents int64

var ErrFormat = errors.New("money: bad format")

// Parse reads "12.34" or "-0.50" into cents.
func Parse(s string) (Cents, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, found := strings.Cut(s, ".")
	if !found {
		frac = "00"
	}
	if len(frac) != 2 {
		return 0, fmt.Errorf("%w: %q", ErrFormat, s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	c := Cents(w*100 + f)
	if neg {
		c = -c
	}
	return c, nil
}

// String formats cents as "12.34".
func (c Cents) String() string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}
"""
MONEY_TEST = """
package money

import "testing"

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Cents
	}{
		{"12.34", 1234},
		{"0.05", 5},
		{"-1.50", -150},
		{"7", 700},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Parse(%q) = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{"1.2.3", "abc", "1.234"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", in)
		}
	}
}

func TestString(t *testing.T) {
	if got := Cents(-1205).String(); got != "-12.05" {
		t.Errorf("String() = %q, want %q", got, "-12.05")
	}
}
"""
LEDGER = """
package ledger

import (
	"sort"
	"sync"

	"example.com/ledger/money"
)

// Entry is one posting to an account.
type Entry struct {
	Account string
	Amount  money.Cents
	Memo    string
}

// Book keeps balances per account; safe for concurrent use.
type Book struct {
	mu       sync.Mutex
	balances map[string]money.Cents
	entries  []Entry
}

func New() *Book {
	return &Book{balances: map[string]money.Cents{}}
}

func (b *Book) Post(e Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.balances[e.Account] += e.Amount
	b.entries = append(b.entries, e)
}

func (b *Book) Balance(account string) money.Cents {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.balances[account]
}

// Accounts lists the accounts with a posting, sorted.
func (b *Book) Accounts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.balances))
	for a := range b.balances {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Total is the sum of all balances.
func (b *Book) Total() money.Cents {
	var t money.Cents
	for _, a := range b.Accounts() {
		t += b.Balance(a)
	}
	return t
}
"""
LEDGER_TEST = """
package ledger

import (
	"reflect"
	"sync"
	"testing"
)

func TestPostAndBalance(t *testing.T) {
	b := New()
	b.Post(Entry{Account: "cash", Amount: 1000})
	b.Post(Entry{Account: "cash", Amount: -250})
	if got := b.Balance("cash"); got != 750 {
		t.Errorf("Balance(cash) = %v, want 7.50", got)
	}
}

func TestAccountsSorted(t *testing.T) {
	b := New()
	for _, a := range []string{"rent", "cash", "food"} {
		b.Post(Entry{Account: a, Amount: 1})
	}
	want := []string{"cash", "food", "rent"}
	if got := b.Accounts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Accounts() = %v, want %v", got, want)
	}
}

func TestConcurrentPosts(t *testing.T) {
	b := New()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Post(Entry{Account: "cash", Amount: 2})
		}()
	}
	wg.Wait()
	if got := b.Total(); got != 100 {
		t.Errorf("Total() = %v, want 1.00", got)
	}
}
"""
MAIN = """
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"example.com/ledger/ledger"
	"example.com/ledger/money"
)

func main() {
	book := ledger.New()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		amt, err := money.Parse(fields[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "skip:", err)
			continue
		}
		book.Post(ledger.Entry{Account: fields[0], Amount: amt})
	}
	for _, a := range book.Accounts() {
		fmt.Printf("%-10s %10s\\n", a, book.Balance(a))
	}
}
"""


def project(c: Case, git: bool = False, **over: str) -> None:
    files = {"go.mod": GOMOD, "money/money.go": MONEY, "money/money_test.go": MONEY_TEST,
             "ledger/ledger.go": LEDGER, "ledger/ledger_test.go": LEDGER_TEST, "cmd/ledger/main.go": MAIN}
    files.update(over)
    c.files(files)
    if git:
        c.sh("git init -q && git add -A && git -c user.name=ci -c user.email=ci@example.com commit -qm init")


def made(name: str, extra: str = "") -> str:
    return f"{GO}{extra} on make/go/gen.py:{name}, run here"


def setup(c: Case) -> None:
    c.step("Set up Go", "go version && go env", env=ENV)
    c.step("Download modules", "go mod download && go mod verify", env=ENV)


def goerr(o: list[str], limit: int = 10) -> list[int]:
    """`file.go:line:col: message` lines of the compiler or vet."""
    return find(o, r"^(\./|\.\./)?[\w/.-]+\.go:\d+:\d+: ", limit=limit)


def fails(o: list[str], limit: int = 5) -> list[int]:
    """`--- FAIL: TestX` headers and the `x_test.go:N: message` lines under them."""
    return find(o, r"^\s*--- FAIL: ", r"^\s+\w+_test\.go:\d+: ", limit=limit)


def test_case(c: Case, name: str, causal, cmd: str = "go test ./...", context=None, category: str = "test",
              tool: str = "go test", build_first: bool = True) -> None:
    setup(c)
    if build_first:
        c.step("Build", "go build ./...", env=ENV)
    c.step("Test", cmd, causal=causal, context=context, env=ENV)
    c.write(tool=tool, category=category, made_by=made(name))


# ---------------------------------------------------------------- go build

@case(ECO)
def build_undefined(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"cmd/ledger/main.go": MAIN.replace("book.Balance(a))", "book.BalanceOf(a))")})
    setup(c)
    c.step("Build", "go build -v ./...", causal=goerr, env=ENV)
    c.write(tool="go build", category="build", made_by=made(name))


@case(ECO)
def build_type_mismatch(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace("func (b *Book) Total() money.Cents {\n\tvar t money.Cents",
                                                     "func (b *Book) Total() money.Cents {\n\tvar t int64")})
    setup(c)
    c.step("Build", "go build ./...", causal=goerr, env=ENV)
    c.write(tool="go build", category="build", made_by=made(name))


@case(ECO)
def build_unused(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": MONEY.replace('\t"strconv"\n', '\t"os"\n\t"strconv"\n').replace(
        "neg := strings.HasPrefix(s, \"-\")", "neg := strings.HasPrefix(s, \"-\")\n\traw := s")})
    setup(c)
    c.step("Build", "go build ./...", causal=goerr, env=ENV)
    c.write(tool="go build", category="build", made_by=made(name))


@case(ECO)
def build_missing_return(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": MONEY.replace("\tif neg {\n\t\tc = -c\n\t}\n\treturn c, nil\n}",
                                                  "\tif neg {\n\t\treturn -c, nil\n\t}\n}"),
                  "ledger/ledger.go": LEDGER.replace("b.entries = append(b.entries, e)", "b.entries = append(b.entries, &e)")})
    setup(c)
    c.step("Build", "go build ./...", causal=goerr, env=ENV)
    c.write(tool="go build", category="build", made_by=made(name))


@case(ECO)
def test_build_failed(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger_test.go": LEDGER_TEST.replace('b.Post(Entry{Account: "cash", Amount: -250})',
                                                               'b.Post(Entry{Account: "cash", Amount: -250, When: 3})')})
    test_case(c, name, goerr, category="build", context=lambda o: find(o, r"\[build failed\]"))


# ---------------------------------------------------------------- go test

@case(ECO)
def test_subtest_errorf(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": MONEY.replace("if !found {\n\t\tfrac = \"00\"\n\t}", "if !found {\n\t\tfrac = \"0\"\n\t}")})
    test_case(c, name, fails, cmd="go test -v ./...")


@case(ECO)
def test_two_packages_fail(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": MONEY.replace('return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)',
                                                  'return fmt.Sprintf("%s%d.%d", sign, c/100, c%100)'),
                  "ledger/ledger.go": LEDGER.replace("sort.Strings(out)", "sort.Sort(sort.Reverse(sort.StringSlice(out)))")})
    test_case(c, name, fails, cmd="go test -count=1 ./...")


@case(ECO)
def test_panic_nil_map(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace("return &Book{balances: map[string]money.Cents{}}", "return &Book{}")})
    test_case(c, name, lambda o: find(o, r"^--- FAIL: ", r"^panic: assignment to entry in nil map", limit=1)
              + find(o, r"ledger/ledger\.go:\d+", r"ledger/ledger_test\.go:\d+", limit=1), cmd="go test -count=1 ./...")


@case(ECO)
def test_panic_index(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": MONEY.replace("neg := strings.HasPrefix(s, \"-\")", "neg := s[0] == '-'"),
                  "money/money_test.go": MONEY_TEST.replace('{"7", 700},', '{"7", 700},\n\t\t{"", 0},')})
    test_case(c, name, lambda o: find(o, r"^\s*--- FAIL: ", r"^panic: runtime error: index out of range", limit=2)
              + find(o, r"money/money\.go:\d+", r"money/money_test\.go:\d+", limit=1), cmd="go test -v -count=1 ./money/")


@case(ECO)
def test_race(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace("func (b *Book) Post(e Entry) {\n\tb.mu.Lock()\n\tdefer b.mu.Unlock()\n",
                                                     "func (b *Book) Post(e Entry) {\n")})
    test_case(c, name, lambda o: find(o, r"^WARNING: DATA RACE", r"^\s+example.com/ledger/ledger\.\(\*Book\)\.Post\(\)", limit=1)
              + find(o, r"^\s+/.*/ledger/ledger\.go:\d+", limit=2) + find(o, r"^\s*--- FAIL: ", r"testing.go:\d+: race detected", limit=2),
              cmd="go test -race -count=1 ./ledger/")


@case(ECO)
def test_timeout(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace("func (b *Book) Balance(account string) money.Cents {\n\tb.mu.Lock()",
                                                     "func (b *Book) Balance(account string) money.Cents {\n\tb.mu.Lock()\n\tif account == \"\" {\n\t\tb.mu.Lock()\n\t}"),
                  "ledger/ledger_test.go": LEDGER_TEST + '\nfunc TestEmptyAccount(t *testing.T) {\n\tif New().Balance("") != 0 {\n\t\tt.Error("nonzero")\n\t}\n}\n'})
    test_case(c, name, lambda o: find(o, r"^panic: test timed out after", r"^\s+running tests:", limit=1)
              + find(o, r"^\s+TestEmptyAccount", limit=1) + find(o, r"ledger\.\(\*Book\)\.Balance", r"/ledger/ledger\.go:\d+", limit=1),
              cmd="go test -count=1 -timeout 5s ./ledger/")


@case(ECO)
def test_fatal_stops(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": MONEY.replace("if len(frac) != 2 {", "if len(frac) != 2 || whole == \"0\" {")})
    test_case(c, name, fails, cmd="go test -count=1 -v ./money/")


EXAMPLE = """
package money_test

import (
	"fmt"

	"example.com/ledger/money"
)

func ExampleParse() {
	c, _ := money.Parse("3.10")
	fmt.Println(c)
	c, _ = money.Parse("-0.07")
	fmt.Println(c)
	// Output:
	// 3.10
	// -0.07
}
"""


@case(ECO)
def test_example_output(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/example_test.go": EXAMPLE,
                  "money/money.go": MONEY.replace("sign, c = \"-\", -c", "sign = \"-\"")})
    test_case(c, name, lambda o: block(o, r"^--- FAIL: ExampleParse", 6, 1, stop=r"^FAIL|^ok"), cmd="go test -count=1 ./...")


FUZZ = """
package money

import "testing"

func FuzzRoundTrip(f *testing.F) {
	f.Add(int64(1234))
	f.Add(int64(5))
	f.Fuzz(func(t *testing.T, n int64) {
		if n > 1e12 || n < -1e12 {
			t.Skip()
		}
		got, err := Parse(Cents(n).String())
		if err != nil {
			t.Fatalf("Parse(%q): %v", Cents(n).String(), err)
		}
		if got != Cents(n) {
			t.Fatalf("round trip of %d gave %d", n, got)
		}
	})
}
"""


@case(ECO)
def fuzz_finds_failure(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/fuzz_test.go": FUZZ,
                  "money/money.go": MONEY.replace("c := Cents(w*100 + f)", "c := Cents(w*100 + f)\n\tif w == 0 && neg {\n\t\tneg = false\n\t}")})
    test_case(c, name, lambda o: find(o, r"^--- FAIL: FuzzRoundTrip", r"^\s+fuzz_test\.go:\d+: ", limit=1), cmd="go test -count=1 ./money/\ngo test -run=XXX -fuzz=FuzzRoundTrip -fuzztime=20s ./money/",
              build_first=False)


# ---------------------------------------------------------------- vet, gofmt, tidy

@case(ECO)
def vet_printf(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"cmd/ledger/main.go": MAIN.replace('fmt.Printf("%-10s %10s\\n", a, book.Balance(a))',
                                                     'fmt.Printf("%-10s %10d %s\\n", a, book.Balance(a))')})
    setup(c)
    c.step("Build", "go build ./...", env=ENV)
    c.step("Vet", "go vet ./...", causal=goerr, env=ENV)
    c.write(tool="go vet", category="lint", made_by=made(name))


@case(ECO)
def vet_copylocks(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER + "\n// Snapshot copies the book.\nfunc (b Book) Snapshot() Book {\n\treturn b\n}\n"})
    setup(c)
    c.step("Build", "go build ./...", env=ENV)
    c.step("Vet", "go vet ./...", causal=goerr, env=ENV)
    c.write(tool="go vet", category="lint", made_by=made(name))


@case(ECO)
def vet_in_go_test(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger_test.go": LEDGER_TEST.replace('t.Errorf("Total() = %v, want 1.00", got)',
                                                               't.Errorf("Total() = %d, want %s", got)')})
    test_case(c, name, goerr, category="lint", context=lambda o: find(o, r"\[build failed\]"))


@case(ECO)
def gofmt_list(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace("\tb.balances[e.Account] += e.Amount", "    b.balances[e.Account]+=e.Amount"),
                  "money/money.go": MONEY.replace("if neg {\n\t\tc = -c\n\t}", "if neg { c = -c }")})
    setup(c)
    c.step("gofmt", 'gofmt -l . | tee /tmp/gofmt.out\ntest -z "$(cat /tmp/gofmt.out)"', show='test -z "$(gofmt -l . | tee /dev/stderr)"',
           causal=lambda o: find(o, r"\.go$", limit=10))
    c.write(tool="gofmt", category="lint", made_by=made(name))


@case(ECO)
def gofmt_diff(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"cmd/ledger/main.go": MAIN.replace("\t\tif len(fields) < 2 {\n\t\t\tcontinue\n\t\t}", "\t\tif len(fields) < 2 { continue }")})
    setup(c)
    c.step("gofmt", "gofmt -d . > fmt.diff; cat fmt.diff; test ! -s fmt.diff",
           causal=lambda o: find(o, r"^diff (-u )?\S+\.go", r"^[-+]\t", limit=6))
    c.write(tool="gofmt", category="lint", made_by=made(name))


@case(ECO)
def mod_tidy_diff(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, git=True, **{"go.mod": GOMOD + "\nrequire example.com/legacy v0.0.0\n\nreplace example.com/legacy => ./third_party/legacy\n",
                            "third_party/legacy/go.mod": "module example.com/legacy\n\ngo 1.19\n",
                            "third_party/legacy/legacy.go": "package legacy\n\nconst Name = \"legacy\"\n"})
    setup(c)
    c.step("Tidy", "go mod tidy\ngit diff --exit-code go.mod",
           causal=lambda o: find(o, r"^diff --git a/go.mod", r"^-require example.com/legacy", r"^-replace example.com/legacy"))
    c.write(tool="go mod tidy", category="lint", made_by=made(name))


# ---------------------------------------------------------------- modules

@case(ECO)
def missing_module_goproxy_off(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"cmd/ledger/main.go": MAIN.replace('"strings"\n', '"strings"\n\n\t"github.com/shopspring/decimal"\n').replace(
        "book := ledger.New()", "book := ledger.New()\n\t_ = decimal.Zero")})
    c.step("Set up Go", "go version && go env GOPATH GOFLAGS GOPROXY", env=ENV)
    c.step("Build", "go build ./...", causal=lambda o: find(o, r"github.com/shopspring/decimal"), env=ENV)
    c.write(tool="go build", category="dependency", made_by=made(name, " with GOPROXY=off"))


@case(ECO)
def missing_require_readonly(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace('"sync"\n', '"sync"\n\n\t"golang.org/x/exp/slices"\n').replace(
        "sort.Strings(out)", "sort.Strings(out)\n\t_ = slices.Contains(out, \"\")")})
    c.step("Set up Go", "go version && go env GOPATH GOFLAGS GOPROXY", env=ENV)
    c.step("Test", "go test -mod=readonly ./...", causal=lambda o: find(o, r"no required module provides package|cannot find module providing package"),
           env={**ENV, "GOFLAGS": ""})
    c.write(tool="go test", category="dependency", made_by=made(name))


@case(ECO)
def gomod_parse_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"go.mod": GOMOD + "\nrequires example.com/tools v0.1.0\n"})
    c.step("Set up Go", "go version", env=ENV)
    c.step("Build", "go build ./...", causal=lambda o: find(o, r"go.mod:\d+: "), env=ENV)
    c.write(tool="go build", category="config", made_by=made(name))


@case(ECO)
def disk_full_tmp(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c)
    c.step("Set up Go", "go version && go env GOTMPDIR", env={**ENV, "GOTMPDIR": "/tmp/cb-gotmp"})
    # GOTMPDIR is a 1 MiB tmpfs in a private mount namespace: a runner whose disk is full
    c.step("Build", "unshare -m bash -c 'mkdir -p /tmp/cb-gotmp && mount -t tmpfs -o size=1m tmpfs /tmp/cb-gotmp && "
           "go build -a -o bin/ledger ./cmd/ledger'", show="go build -a -o bin/ledger ./cmd/ledger",
           env={**ENV, "GOTMPDIR": "/tmp/cb-gotmp"}, causal=lambda o: find(o, r"no space left on device"))
    c.write(tool="go build", category="infrastructure", made_by=made(name, ", GOTMPDIR on a full 1 MiB tmpfs"))


@case(ECO)
def staticcheck_findings(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/ledger.go": LEDGER.replace("\tsort.Strings(out)\n\treturn out", "\tsort.Strings(out)\n\tout = append(out)\n\treturn out")
                  .replace("func (b *Book) Balance(account string) money.Cents {\n\tb.mu.Lock()",
                           "func (b *Book) Balance(account string) money.Cents {\n\tif strings.ToLower(account) == strings.ToLower(\"\") {\n\t\treturn 0\n\t}\n\tb.mu.Lock()")
                  .replace('"sort"\n', '"sort"\n\t"strings"\n')})
    setup(c)
    c.step("Build", "go build ./...", env=ENV)
    c.step("Staticcheck", "go-staticcheck -version\ngo-staticcheck ./...", causal=goerr, env=ENV)
    c.write(tool="staticcheck", category="lint", made_by=made(name, f", {version('go-staticcheck -version')}"))


@case(ECO)
def test_out_of_memory(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"ledger/big_test.go": 'package ledger\n\nimport "testing"\n\nfunc TestManyEntries(t *testing.T) {\n\tb := New()\n'
                  '\tfor i := 0; i < 100_000_000; i++ {\n\t\tb.Post(Entry{Account: "cash", Amount: 1, Memo: "bulk import"})\n\t}\n'
                  '\tif b.Balance("cash") != 100_000_000 {\n\t\tt.Fatal("wrong balance")\n\t}\n}\n'})
    setup(c)
    c.step("Build", "go build ./...", env=ENV)
    # the runner allows 1.5 GB of address space per process: a small CI container
    c.step("Test", "ulimit -v 1500000; go test -count=1 ./...", show="go test -count=1 ./...", env=ENV,
           causal=lambda o: find(o, r"^fatal error: (runtime: )?out of memory", r"^runtime: out of memory", limit=1)
           + find(o, r"ledger/ledger\.go:\d+", r"ledger/big_test\.go:\d+", limit=1))
    c.write(tool="go test", category="infrastructure", made_by=made(name, ", under ulimit -v 1500000 (the runner's memory limit)"))


@case(ECO)
def build_constraints_exclude(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "ledger")
    project(c, **{"money/money.go": "//go:build darwin\n\n" + MONEY.lstrip("\n")})
    setup(c)
    c.step("Build", "go build ./...", env=ENV, causal=lambda o: find(o, r"build constraints exclude all Go files in", limit=2))
    c.write(tool="go build", category="build", made_by=made(name))
