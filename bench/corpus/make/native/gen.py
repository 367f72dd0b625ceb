"""Languages with no rule file yet: Fortran (gfortran), Pascal (Free Pascal), D (gdc) and Nim. Compile errors,
link errors, runtime checks that stop a test program, and each language's own unit-test output."""

from __future__ import annotations

from gen import case
from ws import Case, find, version

GFORTRAN = version("gfortran --version")
FPC = "Free Pascal Compiler " + version("fpc -iV")
GDC = version("gdc --version")
NIM = version("nim --version")

# ---------------------------------------------------------------- Fortran

STATS_F90 = """
module stats
  implicit none
  private
  public :: mean, variance, moving_average
contains
  pure real(8) function mean(x)
    real(8), intent(in) :: x(:)
    mean = sum(x) / size(x)
  end function mean

  pure real(8) function variance(x)
    real(8), intent(in) :: x(:)
    variance = sum((x - mean(x))**2) / (size(x) - 1)
  end function variance

  subroutine moving_average(x, w, out)
    real(8), intent(in) :: x(:)
    integer, intent(in) :: w
    real(8), intent(out) :: out(:)
    integer :: i
    do i = 1, size(x) - w + 1
      out(i) = sum(x(i:i + w - 1)) / w
    end do
  end subroutine moving_average
end module stats
"""
IO_F90 = """
module report
  use stats, only: mean, variance
  implicit none
contains
  subroutine print_summary(x)
    real(8), intent(in) :: x(:)
    write (*, '(A, F10.4)') 'mean     ', mean(x)
    write (*, '(A, F10.4)') 'variance ', variance(x)
  end subroutine print_summary
end module report
"""
MAIN_F90 = """
program summarise
  use report, only: print_summary
  implicit none
  real(8) :: data(6) = [2d0, 4d0, 4d0, 4d0, 5d0, 5d0]
  call print_summary(data)
end program summarise
"""
TEST_F90 = """
program test_stats
  use stats
  implicit none
  real(8) :: x(5) = [1d0, 2d0, 3d0, 4d0, 5d0]
  real(8) :: ma(3)
  integer :: failures = 0

  call check('mean', mean(x), 3d0)
  call check('variance', variance(x), 2.5d0)
  call moving_average(x, 3, ma)
  call check('moving average first', ma(1), 2d0)
  call check('moving average last', ma(3), 4d0)
  if (failures > 0) then
    print '(I0, A)', failures, ' check(s) failed'
    error stop 1
  end if
  print '(A)', 'all checks passed'
contains
  subroutine check(name, got, want)
    character(*), intent(in) :: name
    real(8), intent(in) :: got, want
    if (abs(got - want) > 1d-9) then
      print '(A, A, F8.4, A, F8.4)', 'FAIL: ', name // ': got ', got, ', want ', want
      failures = failures + 1
    else
      print '(A, A)', 'ok: ', name
    end if
  end subroutine check
end program test_stats
"""
F_MAKE = ("FC = gfortran\nFFLAGS = -Wall -O1 -g -fcheck=bounds\n\n"
          "summarise: stats.o report.o main.o\n\t$(FC) $(FFLAGS) -o $@ $^\n\n"
          "test_stats: stats.o test.o\n\t$(FC) $(FFLAGS) -o $@ $^\n\n"
          "%.o: src/%.f90\n\t$(FC) $(FFLAGS) -c $<\n\n"
          "report.o: stats.o\nmain.o: report.o\ntest.o: stats.o\n")


def fortran(c: Case, **over: str) -> None:
    files = {"src/stats.f90": STATS_F90, "src/report.f90": IO_F90, "src/main.f90": MAIN_F90, "src/test.f90": TEST_F90,
             "Makefile": F_MAKE}
    files.update(over)
    c.files(files)
    c.step("Toolchain", "gfortran --version | sed -n 1p")


def f_errors(o: list[str]) -> list[int]:
    """gfortran prints `file:line:col:`, the excerpt, the caret, then `Error: …`."""
    return find(o, r"^Error: ", r"^Fatal Error: ", limit=4) + [i - 4 for i in find(o, r"^Error: ", limit=4)
                                                               if i >= 4 and o[i - 4].startswith("src/")]


@case("fortran")
def gfortran_type_mismatch(name: str, shape: str) -> None:
    c = Case("fortran", name, shape, "stats")
    fortran(c, **{"src/report.f90": IO_F90.replace("'variance ', variance(x)", "'variance ', variance(x(1))")})
    c.step("Build", "make summarise", causal=f_errors)
    c.write(tool="gfortran", category="build", made_by=f"{GFORTRAN} on make/native/gen.py:{name}, run here")


@case("fortran")
def gfortran_undeclared(name: str, shape: str) -> None:
    c = Case("fortran", name, shape, "stats")
    fortran(c, **{"src/stats.f90": STATS_F90.replace("out(i) = sum(x(i:i + w - 1)) / w", "out(i) = sum(x(i:i + width - 1)) / w")})
    c.step("Build", "make summarise", causal=f_errors)
    c.write(tool="gfortran", category="build", made_by=f"{GFORTRAN} on make/native/gen.py:{name}, run here")


@case("fortran")
def gfortran_bounds_check(name: str, shape: str) -> None:
    c = Case("fortran", name, shape, "stats")
    fortran(c, **{"src/stats.f90": STATS_F90.replace("do i = 1, size(x) - w + 1", "do i = 1, size(x) - w + 2")})
    c.step("Build", "make summarise test_stats")
    c.step("Test", "./test_stats", causal=lambda o: find(o, r"^At line \d+ of file", r"^Fortran runtime error:", limit=1))
    c.write(tool="gfortran", category="test", made_by=f"{GFORTRAN} -fcheck=bounds on make/native/gen.py:{name}, run here")


@case("fortran")
def gfortran_check_fails(name: str, shape: str) -> None:
    c = Case("fortran", name, shape, "stats")
    fortran(c, **{"src/stats.f90": STATS_F90.replace("/ (size(x) - 1)", "/ size(x)")})
    c.step("Build", "make summarise test_stats")
    c.step("Test", "./test_stats", causal=lambda o: find(o, r"^FAIL: ", limit=4))
    c.write(tool="gfortran", category="test", made_by=f"{GFORTRAN} on make/native/gen.py:{name}, run here")


@case("fortran")
def gfortran_link_undefined(name: str, shape: str) -> None:
    c = Case("fortran", name, shape, "stats")
    fortran(c, Makefile=F_MAKE.replace("summarise: stats.o report.o main.o", "summarise: report.o main.o"))
    c.step("Build", "make summarise", causal=lambda o: find(o, r"undefined reference to", r"in function `", limit=3))
    c.write(tool="ld", category="build", made_by=f"{GFORTRAN} with GNU ld on make/native/gen.py:{name}, run here")


# ---------------------------------------------------------------- Pascal

UNIT_PAS = """
unit Ledger;

{$mode objfpc}{$H+}

interface

type
  TAmounts = array of Integer;

function Total(const A: TAmounts): Integer;
function Largest(const A: TAmounts): Integer;
function FormatCents(C: Integer): string;

implementation

uses SysUtils;

function Total(const A: TAmounts): Integer;
var
  I: Integer;
begin
  Result := 0;
  for I := Low(A) to High(A) do
    Result := Result + A[I];
end;

function Largest(const A: TAmounts): Integer;
var
  I: Integer;
begin
  Result := A[0];
  for I := 1 to High(A) do
    if A[I] > Result then
      Result := A[I];
end;

function FormatCents(C: Integer): string;
begin
  Result := Format('%d.%.2d', [C div 100, C mod 100]);
end;

end.
"""
TEST_PAS = """
program TestLedger;

{$mode objfpc}{$H+}{$R+}

uses Ledger;

var
  Failures: Integer = 0;
  Empty: TAmounts;

procedure Check(const Name: string; Got, Want: Integer);
begin
  if Got <> Want then
  begin
    WriteLn('FAIL ', Name, ': got ', Got, ', want ', Want);
    Inc(Failures);
  end
  else
    WriteLn('ok   ', Name);
end;

begin
  Check('total', Total([100, 250, 50]), 400);
  Check('largest', Largest([3, 9, 4]), 9);
  Check('total of empty', Total(Empty), 0);
  if FormatCents(305) <> '3.05' then
  begin
    WriteLn('FAIL format: got ', FormatCents(305));
    Inc(Failures);
  end;
  if Failures > 0 then
    Halt(1);
end.
"""


def pascal(c: Case, **over: str) -> None:
    files = {"src/ledger.pas": UNIT_PAS, "tests/testledger.pas": TEST_PAS}
    files.update(over)
    c.files(files)
    c.step("Toolchain", "fpc -iV && fpc -iTP")


PAS_BUILD = "mkdir -p build && fpc -Fusrc -FUbuild -FEbuild -vewn tests/testledger.pas"


@case("pascal")
def fpc_identifier_not_found(name: str, shape: str) -> None:
    c = Case("pascal", name, shape, "ledger")
    pascal(c, **{"src/ledger.pas": UNIT_PAS.replace("Result := Result + A[I];", "Result := Result + Amounts[I];")})
    c.step("Build", PAS_BUILD, causal=lambda o: find(o, r"\) Error: ", r"\) Fatal: ", limit=3))
    c.write(tool="fpc", category="build", made_by=f"{FPC} on make/native/gen.py:{name}, run here")


@case("pascal")
def fpc_type_mismatch(name: str, shape: str) -> None:
    c = Case("pascal", name, shape, "ledger")
    pascal(c, **{"tests/testledger.pas": TEST_PAS.replace("Check('largest', Largest([3, 9, 4]), 9);",
                                                          "Check('largest', Largest([3, 9, 4]), '9');")})
    c.step("Build", PAS_BUILD, causal=lambda o: find(o, r"\) Error: ", r"\) Fatal: ", limit=3))
    c.write(tool="fpc", category="build", made_by=f"{FPC} on make/native/gen.py:{name}, run here")


@case("pascal")
def fpc_range_check_runtime(name: str, shape: str) -> None:
    c = Case("pascal", name, shape, "ledger")
    pascal(c, **{"tests/testledger.pas": TEST_PAS.replace("Check('total of empty', Total(Empty), 0);",
                                                          "Check('total of empty', Total(Empty), 0);\n  Check('largest of empty', Largest(Empty), 0);"),
                 "src/ledger.pas": UNIT_PAS.replace("{$mode objfpc}{$H+}", "{$mode objfpc}{$H+}{$R+}")})
    c.step("Build", PAS_BUILD)
    c.step("Test", "./build/testledger", causal=lambda o: find(o, r"^An unhandled exception occurred", r"^ERangeError: ", limit=1))
    c.write(tool="fpc", category="test", made_by=f"{FPC} with range checks on make/native/gen.py:{name}, run here")


@case("pascal")
def fpc_check_fails(name: str, shape: str) -> None:
    c = Case("pascal", name, shape, "ledger")
    pascal(c, **{"src/ledger.pas": UNIT_PAS.replace("Format('%d.%.2d'", "Format('%d.%d'")})
    c.step("Build", PAS_BUILD)
    c.step("Test", "./build/testledger", causal=lambda o: find(o, r"^FAIL ", limit=3))
    c.write(tool="fpc", category="test", made_by=f"{FPC} on make/native/gen.py:{name}, run here")


# ---------------------------------------------------------------- D

MATRIX_D = """
module matrix;

struct Matrix
{
    size_t rows, cols;
    double[] data;

    this(size_t rows, size_t cols)
    {
        this.rows = rows;
        this.cols = cols;
        data = new double[rows * cols];
        data[] = 0;
    }

    ref double opIndex(size_t r, size_t c) { return data[r * cols + c]; }

    Matrix opBinary(string op : "*")(Matrix o)
    {
        auto m = Matrix(rows, o.cols);
        foreach (i; 0 .. rows)
            foreach (j; 0 .. o.cols)
                foreach (k; 0 .. cols)
                    m[i, j] += this[i, k] * o[k, j];
        return m;
    }

    double trace()
    {
        double t = 0;
        foreach (i; 0 .. rows)
            t += this[i, i];
        return t;
    }
}

Matrix identity(size_t n)
{
    auto m = Matrix(n, n);
    foreach (i; 0 .. n)
        m[i, i] = 1;
    return m;
}

unittest
{
    auto i3 = identity(3);
    assert(i3.trace() == 3);
}

unittest
{
    auto a = Matrix(2, 2);
    a[0, 0] = 1; a[0, 1] = 2; a[1, 0] = 3; a[1, 1] = 4;
    auto p = a * identity(2);
    assert(p[1, 0] == 3, "multiplying by the identity changes nothing");
    assert((a * a).trace() == 29);
}
"""
D_MAIN = """
module app;

import std.stdio;
import matrix;

void main()
{
    auto m = identity(4);
    writeln("trace ", m.trace());
}
"""


def dlang(c: Case, **over: str) -> None:
    files = {"source/matrix.d": MATRIX_D, "source/app.d": D_MAIN}
    files.update(over)
    c.files(files)
    c.step("Toolchain", "gdc --version | sed -n 1p")


@case("d")
def gdc_undefined_identifier(name: str, shape: str) -> None:
    c = Case("d", name, shape, "matrix")
    dlang(c, **{"source/app.d": D_MAIN.replace('writeln("trace ", m.trace());', 'writeln("trace ", m.trace(), " det ", m.determinant());')})
    c.step("Build", "mkdir -p bin && gdc -Wall -Isource -o bin/app source/app.d source/matrix.d",
           causal=lambda o: find(o, r"\.d:\d+:\d+: error: ", limit=3))
    c.write(tool="gdc", category="build", made_by=f"{GDC} on make/native/gen.py:{name}, run here")


@case("d")
def gdc_type_error(name: str, shape: str) -> None:
    c = Case("d", name, shape, "matrix")
    dlang(c, **{"source/matrix.d": MATRIX_D.replace("double trace()\n    {\n        double t = 0;", "int trace()\n    {\n        double t = 0;")})
    c.step("Build", "mkdir -p bin && gdc -Wall -Isource -o bin/app source/app.d source/matrix.d",
           causal=lambda o: find(o, r"\.d:\d+:\d+: error: ", limit=3))
    c.write(tool="gdc", category="build", made_by=f"{GDC} on make/native/gen.py:{name}, run here")


@case("d")
def gdc_unittest_failure(name: str, shape: str) -> None:
    c = Case("d", name, shape, "matrix")
    dlang(c, **{"source/matrix.d": MATRIX_D.replace("foreach (k; 0 .. cols)\n                    m[i, j] += this[i, k] * o[k, j];",
                                                    "foreach (k; 0 .. cols)\n                    m[i, j] += this[i, k] * o[j, k];")})
    c.step("Build", "mkdir -p bin && gdc -Wall -Isource -o bin/app source/app.d source/matrix.d")
    c.step("Test", "gdc -funittest -fmain -Isource -o bin/matrix-test source/matrix.d && ./bin/matrix-test",
           causal=lambda o: find(o, r"AssertError@source/matrix\.d\(\d+\)", r"unittest failure", r"^\d+/\d+ modules FAILED", limit=1))
    c.write(tool="gdc", category="test", made_by=f"{GDC} -funittest on make/native/gen.py:{name}, run here")


# ---------------------------------------------------------------- Nim

PARSE_NIM = """
import std/[strutils, tables]

type
  Config* = Table[string, string]

proc parseConfig*(text: string): Config =
  result = initTable[string, string]()
  for raw in text.splitLines:
    let line = raw.strip
    if line.len == 0 or line.startsWith("#"):
      continue
    let parts = line.split('=', maxsplit = 1)
    if parts.len != 2:
      raise newException(ValueError, "bad line: " & line)
    result[parts[0].strip] = parts[1].strip

proc getInt*(c: Config, key: string, default = 0): int =
  if key in c: parseInt(c[key]) else: default
"""
TEST_NIM = """
import std/[tables, unittest]
import ../src/confparse

suite "confparse":
  test "reads keys and values":
    let c = parseConfig("name = demo\\nport = 8080\\n")
    check c["name"] == "demo"
    check c.getInt("port") == 8080

  test "skips comments and blanks":
    let c = parseConfig("# comment\\n\\nkey=value")
    check c.len == 1

  test "values may contain '='":
    let c = parseConfig("url = a=b")
    check c["url"] == "a=b"

  test "default for missing keys":
    check parseConfig("").getInt("retries", 3) == 3
"""


def nim(c: Case, **over: str) -> None:
    files = {"src/confparse.nim": PARSE_NIM, "tests/tconfparse.nim": TEST_NIM}
    files.update(over)
    c.files(files)
    c.step("Toolchain", "nim --version | sed -n 1p")


NIM_TEST = "nim c --hints:off --nimcache:build/cache -o:build/tconfparse -r tests/tconfparse.nim"


@case("nim")
def nim_type_mismatch(name: str, shape: str) -> None:
    c = Case("nim", name, shape, "confparse")
    nim(c, **{"src/confparse.nim": PARSE_NIM.replace("if key in c: parseInt(c[key]) else: default", "if key in c: c[key] else: default")})
    c.step("Test", NIM_TEST, causal=lambda o: find(o, r"\.nim\(\d+, \d+\) Error: ", limit=3))
    c.write(tool="nim", category="build", made_by=f"{NIM} on make/native/gen.py:{name}, run here")


@case("nim")
def nim_undeclared(name: str, shape: str) -> None:
    c = Case("nim", name, shape, "confparse")
    nim(c, **{"src/confparse.nim": PARSE_NIM.replace("let line = raw.strip", "let line = raw.stripped")})
    c.step("Test", NIM_TEST, causal=lambda o: find(o, r"\.nim\(\d+, \d+\) Error: ", limit=3))
    c.write(tool="nim", category="build", made_by=f"{NIM} on make/native/gen.py:{name}, run here")


@case("nim")
def nim_unittest_failure(name: str, shape: str) -> None:
    c = Case("nim", name, shape, "confparse")
    nim(c, **{"src/confparse.nim": PARSE_NIM.replace("let parts = line.split('=', maxsplit = 1)", "let parts = line.split('=')")
              .replace("if parts.len != 2:", "if parts.len < 2:")})
    c.step("Test", NIM_TEST, causal=lambda o: find(o, r"tconfparse\.nim\(\d+, \d+\): Check failed", r"^\s+c\[\"url\"\] was ", r"\[FAILED\]", limit=2))
    c.write(tool="nim unittest", category="test", made_by=f"{NIM} std/unittest on make/native/gen.py:{name}, run here")


@case("nim")
def nim_unhandled_exception(name: str, shape: str) -> None:
    c = Case("nim", name, shape, "confparse")
    nim(c, **{"tests/tconfparse.nim": TEST_NIM.replace('let c = parseConfig("# comment\\n\\nkey=value")',
                                                       'let c = parseConfig("# comment\\n\\nkey value")')})
    c.step("Test", NIM_TEST, causal=lambda o: find(o, r"Unhandled exception: bad line", r"\[ValueError\]", r"confparse\.nim\(\d+\) parseConfig",
                                                   r"\[FAILED\]", limit=1))
    c.write(tool="nim unittest", category="test", made_by=f"{NIM} std/unittest on make/native/gen.py:{name}, run here")
