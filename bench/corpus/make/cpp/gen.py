"""C and C++ cases: gcc/clang compile errors, the linker, make, CMake configure, CTest, GoogleTest, Catch2, cmocka,
Check, cppcheck, clang-tidy, clang-format, sanitizers, valgrind, and a compiler killed by the OOM killer."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

ECO = "cpp"
GCC = version("gcc --version")
GXX = version("g++ --version")
CLANG = version("clang --version")
MAKE = version("make --version")
CMAKE = version("cmake --version")

HEADER = """
#ifndef CALC_H
#define CALC_H
#include <stddef.h>

typedef struct { double values[64]; size_t len; } stack_t_;

int parse_number(const char *s, double *out);
double eval_rpn(const char *expr, int *err);
void stack_push(stack_t_ *s, double v);
double stack_pop(stack_t_ *s);
size_t str_count(const char *s, char c);
#endif
"""
MAIN = """
#include <stdio.h>
#include "calc.h"

int main(int argc, char **argv) {
    int err = 0;
    for (int i = 1; i < argc; i++) {
        double v = eval_rpn(argv[i], &err);
        if (err) { fprintf(stderr, "bad expression: %s\\n", argv[i]); return 2; }
        printf("%g\\n", v);
    }
    return 0;
}
"""
PARSE = """
#include <stdlib.h>
#include "calc.h"

int parse_number(const char *s, double *out) {
    char *end;
    *out = strtod(s, &end);
    return end != s;
}
"""
EVAL = """
#include <string.h>
#include <stdlib.h>
#include "calc.h"

double eval_rpn(const char *expr, int *err) {
    stack_t_ st = { {0}, 0 };
    char buf[256];
    strncpy(buf, expr, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        double v;
        if (parse_number(tok, &v)) { stack_push(&st, v); continue; }
        double b = stack_pop(&st), a = stack_pop(&st);
        switch (tok[0]) {
        case '+': stack_push(&st, a + b); break;
        case '-': stack_push(&st, a - b); break;
        case '*': stack_push(&st, a * b); break;
        case '/': stack_push(&st, a / b); break;
        default: *err = 1; return 0;
        }
    }
    return stack_pop(&st);
}
"""
UTIL = """
#include "calc.h"

void stack_push(stack_t_ *s, double v) { s->values[s->len++] = v; }
double stack_pop(stack_t_ *s) { return s->len ? s->values[--s->len] : 0.0; }

size_t str_count(const char *s, char c) {
    size_t n = 0;
    for (; *s; s++) n += (*s == c);
    return n;
}
"""
WARN = """
#include "calc.h"

/* unused parameter: a warning that never failed the build */
int calc_version(int verbose) { return 3; }
"""
MAKEFILE = (
    "CC ?= cc\n"
    "CFLAGS ?= -Wall -Wextra -O2 -g\n"
    "CPPFLAGS += -Iinclude\n"
    "SRC = src/main.c src/parse.c src/eval.c src/util.c src/version.c\n"
    "OBJ = $(SRC:.c=.o)\n\n"
    "calc: $(OBJ)\n\t$(CC) $(CFLAGS) -o $@ $(OBJ) $(LDLIBS)\n\n"
    "check: calc\n\t./tests/run.sh ./calc\n\n"
    "clean:\n\trm -f calc $(OBJ)\n"
)
RUN_TESTS = """
#!/bin/sh
set -u
calc=$1; pass=0; fail=0
check() {
    got=$($calc "$1" 2>&1)
    if [ "$got" = "$2" ]; then pass=$((pass+1)); echo "ok - $1 = $2";
    else fail=$((fail+1)); echo "not ok - $1: expected $2, got $got"; fi
}
check "1 2 +" 3
check "6 3 /" 2
check "2 3 4 * +" 14
check "10 4 -" 6
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
"""


def c_project(c: Case, **over: str) -> None:
    files = {"include/calc.h": HEADER, "src/main.c": MAIN, "src/parse.c": PARSE, "src/eval.c": EVAL,
             "src/util.c": UTIL, "src/version.c": WARN, "Makefile": MAKEFILE, "tests/run.sh": RUN_TESTS}
    files.update(over)
    c.files(files)
    c.sh("chmod +x tests/run.sh")


def toolchain(c: Case, cc: str = "gcc") -> None:
    c.step("Toolchain", f"{cc} --version && make --version | sed -n 1p")


def err_block(out: list[str], n: int = 2, limit: int = 3, pat: str = r": (fatal )?error: ") -> list[int]:
    """A compiler's error line with its source excerpt and caret (gcc and clang print both under it)."""
    return block(out, pat, n, limit, stop=r"^\S+:\d+:\d+: |^In file|^\S+: In function")


# ---------------------------------------------------------------- gcc / clang compile errors

@case(ECO)
def gcc_undeclared(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/eval.c": EVAL.replace("return stack_pop(&st);", "return stack_pop(&stack);")})
    toolchain(c)
    c.step("Build", "make CC=gcc", causal=lambda o: err_block(o, 2, 1))
    c.write(tool="gcc", category="build", made_by=f"{GCC}, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def gcc_several_errors(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    bad = UTIL.replace("s->values[s->len++] = v; }", "s->values[s->len++] = v }").replace(
        "n += (*s == c);", "n += (*s == c) * weight;\n    const char *p = n;\n    return p;")
    c_project(c, **{"src/util.c": bad})
    toolchain(c)
    c.step("Build", "make CC=gcc -k", causal=lambda o: err_block(o, 2, 5))
    c.write(tool="gcc", category="build", made_by=f"{GCC}, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def gcc_missing_header(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/parse.c": '#include "strutil.h"\n' + PARSE})
    toolchain(c)
    c.step("Build", "make CC=gcc", causal=lambda o: err_block(o, 2, 1))
    c.write(tool="gcc", category="build", made_by=f"{GCC}, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def gcc_werror(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/parse.c": PARSE.replace("char *end;", "char *end;\n    int unused_len = 0;")})
    toolchain(c)
    c.step("Build", "make CC=gcc CFLAGS='-Wall -Wextra -Werror -O2'",
           causal=lambda o: err_block(o, 2, 3) + find(o, r"all warnings being treated as errors"))
    c.write(tool="gcc", category="build", made_by=f"{GCC}, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def clang_implicit_decl_link(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/main.c": MAIN.replace('printf("%g\\n", v);', 'print_value(v);')})
    toolchain(c, "clang")
    c.step("Build", "make CC=clang", causal=lambda o: find(o, r"undefined reference to", r"in function `"))
    c.write(tool="clang", category="build", made_by=f"{CLANG}, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def clang_incompatible_pointer(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/eval.c": EVAL.replace("if (parse_number(tok, &v))", "if (parse_number(&tok, v))")})
    toolchain(c, "clang")
    c.step("Build", "make CC=clang CFLAGS='-Wall -O2 -Werror=incompatible-pointer-types'",
           causal=lambda o: err_block(o, 2, 3))
    c.write(tool="clang", category="build", made_by=f"{CLANG}, {MAKE} on make/cpp/gen.py:{name}, run here")


# ---------------------------------------------------------------- linker

@case(ECO)
def ld_undefined_reference(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, Makefile=MAKEFILE.replace(" src/util.c", ""))
    toolchain(c)
    c.step("Build", "make CC=gcc",
           causal=lambda o: find(o, r"undefined reference to", r"in function `", limit=4))
    c.write(tool="ld", category="build", made_by=f"{GCC} with GNU ld, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def ld_multiple_definition(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/parse.c": PARSE + "\nsize_t str_count(const char *s, char c) { (void)s; (void)c; return 0; }\n"})
    toolchain(c)
    c.step("Build", "make CC=gcc", causal=lambda o: find(o, r"multiple definition of", r"first defined here"))
    c.write(tool="ld", category="build", made_by=f"{GCC} with GNU ld, {MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def ld_missing_library(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c)
    toolchain(c, "clang")
    c.step("Build", "make CC=clang LDLIBS='-lm -lreadline_compat'",
           causal=lambda o: find(o, r"cannot find -lreadline_compat"))
    c.write(tool="ld", category="build", made_by=f"{CLANG} with GNU ld, {MAKE} on make/cpp/gen.py:{name}, run here")


# ---------------------------------------------------------------- make itself

@case(ECO)
def make_no_rule(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, Makefile=MAKEFILE.replace("src/version.c", "src/version.c src/history.c"))
    toolchain(c)
    c.step("Build", "make CC=gcc", causal=lambda o: find(o, r"No rule to make target"))
    c.write(tool="make", category="build", made_by=f"{MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def make_missing_separator(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, Makefile=MAKEFILE.replace("\t$(CC) $(CFLAGS) -o $@", "    $(CC) $(CFLAGS) -o $@"))
    toolchain(c)
    c.step("Build", "make CC=gcc", causal=lambda o: find(o, r"missing separator"))
    c.write(tool="make", category="config", made_by=f"{MAKE} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def make_check_script(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/eval.c": EVAL.replace("case '-': stack_push(&st, a - b)", "case '-': stack_push(&st, b - a)")})
    toolchain(c)
    c.step("Build", "make CC=gcc")
    c.step("Test", "make check", causal=lambda o: find(o, r"^not ok"))
    c.write(tool="make", category="test", made_by=f"{GCC}, {MAKE} and a shell test script on make/cpp/gen.py:{name}, run here")


# ---------------------------------------------------------------- sanitizers, valgrind, assert

ASAN_TEST = """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "calc.h"

static char *copy_token(const char *s) {
    char *out = malloc(strlen(s));
    strcpy(out, s);
    return out;
}

int main(void) {
    const char *cases[] = {"1 2 +", "3 4 *", "12 3 /"};
    for (int i = 0; i < 3; i++) {
        char *t = copy_token(cases[i]);
        int err = 0;
        printf("test %d: %s = %g\\n", i, t, eval_rpn(t, &err));
        free(t);
    }
    return 0;
}
"""


@case(ECO)
def asan_heap_overflow(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/asan_test.c": ASAN_TEST})
    toolchain(c)
    c.step("Build", "make CC=gcc CFLAGS='-O1 -g -fsanitize=address -fno-omit-frame-pointer' calc\n"
           "gcc -O1 -g -fsanitize=address -Iinclude -o asan_test tests/asan_test.c src/eval.c src/parse.c src/util.c")
    c.step("Test (ASan)", "./asan_test", causal=lambda o: find(
        o, r"ERROR: AddressSanitizer", r"WRITE of size", r"#\d+ .* in (copy_token|main) .*tests/asan_test\.c",
        r"^SUMMARY: AddressSanitizer", limit=2), env={"ASAN_OPTIONS": "detect_leaks=0"})
    c.write(tool="asan", category="test", made_by=f"{GCC} -fsanitize=address on make/cpp/gen.py:{name}, run here")


UBSAN_TEST = """
#include <stdio.h>
#include <limits.h>

static int scale(int v, int by) { return v * by; }

int main(void) {
    int total = 0;
    for (int i = 1; i <= 3; i++) {
        total += scale(INT_MAX / 2, i);
        printf("step %d total %d\\n", i, total);
    }
    return 0;
}
"""


@case(ECO)
def ubsan_overflow(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/ubsan_test.c": UBSAN_TEST})
    toolchain(c)
    c.step("Build", "gcc -g -fsanitize=undefined -fno-sanitize-recover=undefined -o ubsan_test tests/ubsan_test.c")
    c.step("Test (UBSan)", "./ubsan_test", causal=lambda o: find(o, r"runtime error:", r"^SUMMARY: UndefinedBehavior"))
    c.write(tool="ubsan", category="test", made_by=f"{GCC} -fsanitize=undefined on make/cpp/gen.py:{name}, run here")


VALGRIND_TEST = """
#include <stdio.h>
#include <stdlib.h>
#include "calc.h"

static double *history(size_t n) {
    double *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = (double)i;
    return h;
}

int main(void) {
    double *h = history(8);
    double sum = 0;
    for (size_t i = 0; i <= 8; i++) sum += h[i];
    printf("history sum %g\\n", sum);
    free(h);
    return 0;
}
"""


@case(ECO)
def valgrind_invalid_read(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/history_test.c": VALGRIND_TEST})
    toolchain(c)
    c.step("Build", "gcc -O0 -g -Iinclude -o history_test tests/history_test.c")
    c.step("Memcheck", "valgrind --error-exitcode=1 --leak-check=full ./history_test",
           causal=lambda o: find(o, r"Invalid read of size", r"at 0x.*\(history_test\.c:\d+\)",
                                 r"Address 0x.* is 0 bytes after a block", r"by 0x.*\(history_test\.c:\d+\)", limit=2)
           + find(o, r"ERROR SUMMARY: [1-9]", limit=1))
    c.write(tool="valgrind", category="test", made_by=f"{version('valgrind --version')}, {GCC} on make/cpp/gen.py:{name}, run here")


ASSERT_TEST = """
#include <assert.h>
#include <stdio.h>
#include <math.h>
#include "calc.h"

static void expect(const char *expr, double want) {
    int err = 0;
    double got = eval_rpn(expr, &err);
    printf("  %-12s -> %g\\n", expr, got);
    assert(fabs(got - want) < 1e-9);
}

int main(void) {
    puts("eval tests");
    expect("1 2 +", 3);
    expect("7 2 -", 5);
    expect("2 5 *", 10);
    expect("9 3 /", 3);
    expect("2 3 4 + *", 14);
    puts("all passed");
    return 0;
}
"""


@case(ECO)
def c_assert_abort(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/eval_test.c": ASSERT_TEST,
                    "src/eval.c": EVAL.replace("case '/': stack_push(&st, a / b)", "case '/': stack_push(&st, b / a)")})
    toolchain(c)
    c.step("Build", "make CC=gcc && gcc -g -Iinclude -o eval_test tests/eval_test.c src/eval.c src/parse.c src/util.c -lm")
    c.step("Test", "./eval_test", causal=lambda o: find(o, r"Assertion .* failed", r"9 3 /"))
    c.write(tool="assert", category="test", made_by=f"{GCC}, C assert() on make/cpp/gen.py:{name}, run here")


# ---------------------------------------------------------------- static analysis and formatting

@case(ECO)
def cppcheck_out_of_bounds(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    bad = UTIL + "\nint last_digit(void) {\n    int digits[10];\n    for (int i = 0; i < 10; i++) digits[i] = i;\n" \
        "    return digits[10];\n}\n"
    c_project(c, **{"src/util.c": bad})
    c.step("Version", "cppcheck --version")
    c.step("cppcheck", "cppcheck --enable=warning,style --error-exitcode=1 --inline-suppr -Iinclude src/",
           causal=lambda o: block(o, r"\[arrayIndexOutOfBounds\]", 2, 3))
    c.write(tool="cppcheck", category="lint", made_by=f"{version('cppcheck --version')} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def cppcheck_null_and_leak(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    bad = PARSE + "\nchar *dup_token(const char *s) {\n    char *p = malloc(16);\n    if (!s) return 0;\n" \
        "    p[0] = s[0];\n    return 0;\n}\n"
    c_project(c, **{"src/parse.c": bad})
    c.step("Version", "cppcheck --version")
    c.step("cppcheck", "cppcheck --enable=warning --error-exitcode=2 -q -Iinclude src/",
           causal=lambda o: block(o, r"\[memleak\]|\[nullPointer", 2, 3))
    c.write(tool="cppcheck", category="lint", made_by=f"{version('cppcheck --version')} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def clang_tidy_warnings_as_errors(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    bad = EVAL.replace("char buf[256];", "char buf[256];\n    char *scratch = malloc(8);\n    scratch = NULL;")
    c_project(c, **{"src/eval.c": bad, ".clang-tidy": "Checks: '-*,clang-analyzer-*,bugprone-*'\nWarningsAsErrors: '*'\n"})
    c.step("clang-tidy", "clang-tidy --version | sed -n 1,2p\nclang-tidy src/*.c -- -Iinclude",
           causal=lambda o: err_block(o, 2, 10, r": error: .*\["))
    c.write(tool="clang-tidy", category="lint", made_by=f"{version('clang-tidy --version | sed -n 2p')} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def clang_format_dry_run(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"src/util.c": UTIL.replace("size_t n = 0;", "size_t n=0;   ").replace("for (; *s; s++)", "for(;*s;s++)"),
                    ".clang-format": "BasedOnStyle: LLVM\nIndentWidth: 4\nColumnLimit: 110\n"
                                     "AllowShortFunctionsOnASingleLine: All\n"})
    c.sh("clang-format -i src/main.c src/parse.c src/eval.c src/version.c include/calc.h")
    c.step("Format check", "clang-format --version\nclang-format --dry-run --Werror src/*.c include/*.h",
           causal=lambda o: err_block(o, 2, 10, r"error: code should be clang-formatted"))
    c.write(tool="clang-format", category="lint", made_by=f"{version('clang-format --version')} on make/cpp/gen.py:{name}, run here")


# ---------------------------------------------------------------- CMake, CTest and C++ test frameworks

CMAKE_LISTS = """
cmake_minimum_required(VERSION 3.16)
project(shapes CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
add_compile_options(-Wall -Wextra)

add_library(shapes src/shape.cpp src/registry.cpp src/area.cpp)
target_include_directories(shapes PUBLIC include)

add_executable(shapes_cli src/main.cpp)
target_link_libraries(shapes_cli PRIVATE shapes)

enable_testing()
find_package(GTest REQUIRED)
add_executable(shapes_test tests/shape_test.cpp tests/registry_test.cpp)
target_link_libraries(shapes_test PRIVATE shapes GTest::gtest_main)
include(GoogleTest)
gtest_discover_tests(shapes_test)
"""
SHAPE_H = """
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shapes {
struct Shape {
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual std::string name() const = 0;
};
std::unique_ptr<Shape> make_circle(double r);
std::unique_ptr<Shape> make_rect(double w, double h);
double total_area(const std::vector<std::unique_ptr<Shape>>& all);

class Registry {
public:
    void add(const std::string& key, std::unique_ptr<Shape> s);
    const Shape* find(const std::string& key) const;
    std::size_t size() const { return items_.size(); }
private:
    std::map<std::string, std::unique_ptr<Shape>> items_;
};
}  // namespace shapes
"""
SHAPE_CPP = """
#include "shapes.hpp"
#include <cmath>

namespace shapes {
namespace {
struct Circle : Shape {
    double r;
    explicit Circle(double r) : r(r) {}
    double area() const override { return M_PI * r * r; }
    std::string name() const override { return "circle"; }
};
struct Rect : Shape {
    double w, h;
    Rect(double w, double h) : w(w), h(h) {}
    double area() const override { return w * h; }
    std::string name() const override { return "rect"; }
};
}  // namespace
std::unique_ptr<Shape> make_circle(double r) { return std::make_unique<Circle>(r); }
std::unique_ptr<Shape> make_rect(double w, double h) { return std::make_unique<Rect>(w, h); }
}  // namespace shapes
"""
AREA_CPP = """
#include "shapes.hpp"

namespace shapes {
double total_area(const std::vector<std::unique_ptr<Shape>>& all) {
    double sum = 0;
    for (const auto& s : all) sum += s->area();
    return sum;
}
}  // namespace shapes
"""
REGISTRY_CPP = """
#include "shapes.hpp"

namespace shapes {
void Registry::add(const std::string& key, std::unique_ptr<Shape> s) { items_[key] = std::move(s); }
const Shape* Registry::find(const std::string& key) const {
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second.get();
}
}  // namespace shapes
"""
MAIN_CPP = """
#include <iostream>
#include "shapes.hpp"

int main() {
    std::vector<std::unique_ptr<shapes::Shape>> all;
    all.push_back(shapes::make_circle(1.0));
    all.push_back(shapes::make_rect(2.0, 3.0));
    std::cout << "total area " << shapes::total_area(all) << "\\n";
}
"""
SHAPE_TEST = """
#include <gtest/gtest.h>
#include "shapes.hpp"

TEST(ShapeTest, CircleArea) { EXPECT_NEAR(shapes::make_circle(1.0)->area(), 3.14159, 1e-4); }
TEST(ShapeTest, RectArea) { EXPECT_DOUBLE_EQ(shapes::make_rect(2.0, 3.0)->area(), 6.0); }
TEST(ShapeTest, Names) {
    EXPECT_EQ(shapes::make_circle(1)->name(), "circle");
    EXPECT_EQ(shapes::make_rect(1, 1)->name(), "rect");
}
TEST(ShapeTest, TotalArea) {
    std::vector<std::unique_ptr<shapes::Shape>> all;
    all.push_back(shapes::make_rect(1.0, 1.0));
    all.push_back(shapes::make_rect(2.0, 2.0));
    EXPECT_DOUBLE_EQ(shapes::total_area(all), 5.0);
}
"""
REGISTRY_TEST = """
#include <gtest/gtest.h>
#include "shapes.hpp"

TEST(RegistryTest, AddAndFind) {
    shapes::Registry r;
    r.add("a", shapes::make_rect(1, 2));
    ASSERT_NE(r.find("a"), nullptr);
    EXPECT_EQ(r.find("a")->name(), "rect");
}
TEST(RegistryTest, Missing) {
    shapes::Registry r;
    EXPECT_EQ(r.find("nope"), nullptr);
}
TEST(RegistryTest, Replace) {
    shapes::Registry r;
    r.add("a", shapes::make_rect(1, 2));
    r.add("a", shapes::make_circle(2));
    EXPECT_EQ(r.size(), 1u);
}
"""


def cmake_project(c: Case, **over: str) -> None:
    files = {"CMakeLists.txt": CMAKE_LISTS, "include/shapes.hpp": SHAPE_H, "src/shape.cpp": SHAPE_CPP,
             "src/area.cpp": AREA_CPP, "src/registry.cpp": REGISTRY_CPP, "src/main.cpp": MAIN_CPP,
             "tests/shape_test.cpp": SHAPE_TEST, "tests/registry_test.cpp": REGISTRY_TEST}
    files.update(over)
    c.files(files)


def cmake_steps(c: Case, configure_causal=None, build_causal=None, test_causal=None, cxx: str = "g++", test_context=None,
                test_cmd: str = "ctest --test-dir build --output-on-failure") -> None:
    c.step("Configure", f"cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER={cxx}",
           causal=configure_causal)
    c.step("Build", "cmake --build build -j2", causal=build_causal)
    c.step("Test", test_cmd, causal=test_causal, context=test_context)


def cm(name: str, extra: str = "") -> str:
    return f"{CMAKE}, {GXX}{extra} on make/cpp/gen.py:{name}, run here"


@case(ECO)
def cmake_find_package_missing(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"CMakeLists.txt": CMAKE_LISTS.replace("find_package(GTest REQUIRED)",
                                                               "find_package(GTest REQUIRED)\nfind_package(fmt 9 REQUIRED)")})
    cmake_steps(c, configure_causal=lambda o: block(o, r"^CMake Error at CMakeLists.txt", 6, 1, stop=r"^-- Configuring incomplete"))
    c.write(tool="cmake", category="dependency", made_by=cm(name))


@case(ECO)
def cmake_unknown_command(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"CMakeLists.txt": CMAKE_LISTS.replace("add_executable(shapes_cli", "add_exectuable(shapes_cli")})
    cmake_steps(c, configure_causal=lambda o: block(o, r"^CMake Error at CMakeLists.txt", 2, 1))
    c.write(tool="cmake", category="config", made_by=cm(name))


@case(ECO)
def cmake_missing_source(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"CMakeLists.txt": CMAKE_LISTS.replace("src/area.cpp)", "src/area.cpp src/perimeter.cpp)")})
    cmake_steps(c, configure_causal=lambda o: find(o, r"^CMake Error at", r"Cannot find source file", r"^\s+src/perimeter.cpp", limit=1))
    c.write(tool="cmake", category="build", made_by=cm(name))


@case(ECO)
def cmake_gxx_no_member(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"src/area.cpp": AREA_CPP.replace("s->area()", "s->surface()")})
    cmake_steps(c, build_causal=lambda o: err_block(o, 2, 3))
    c.write(tool="g++", category="build", made_by=cm(name))


@case(ECO)
def cmake_gxx_no_matching_call(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"src/main.cpp": MAIN_CPP.replace("make_rect(2.0, 3.0)", 'make_rect(2.0, "3.0")')})
    cmake_steps(c, build_causal=lambda o: err_block(o, 2, 1) + find(o, r"note:.*cannot convert", limit=1))
    c.write(tool="g++", category="build", made_by=cm(name))


@case(ECO)
def cmake_clangxx_abstract(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"src/shape.cpp": SHAPE_CPP.replace('std::string name() const override { return "rect"; }', "")})
    cmake_steps(c, cxx="clang++", build_causal=lambda o: err_block(o, 2, 3) + find(o, r"src/shape.cpp:\d+:\d+: note: in instantiation", r"note: unimplemented pure virtual"))
    c.write(tool="clang++", category="build", made_by=f"{CMAKE}, {CLANG} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def gtest_expect_eq(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"src/area.cpp": AREA_CPP.replace("for (const auto& s : all) sum += s->area();",
                                                         "for (std::size_t i = 1; i < all.size(); i++) sum += all[i]->area();")})
    cmake_steps(c, test_cmd="./build/shapes_test",
                test_causal=lambda o: block(o, r": Failure$", 4, 3, stop=r"^\[") + find(o, r"^\[  FAILED  \] ShapeTest\.\w+ \(", limit=1))
    c.write(tool="googletest", category="test", made_by=cm(name, f", GoogleTest {version('dpkg-query -W -f=${Version} libgtest-dev')}"))


@case(ECO)
def ctest_gtest_two_failures(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"src/shape.cpp": SHAPE_CPP.replace('return "rect";', 'return "rectangle";'),
                        "src/registry.cpp": REGISTRY_CPP.replace("items_[key] = std::move(s);",
                                                                 "if (!items_.count(key)) items_[key] = std::move(s);")
                        .replace("return it == items_.end()", "return it != items_.end() && false")})
    cmake_steps(c, test_causal=lambda o: block(o, r": Failure$", 4, 3, stop=r"^\[|^\d+/\d+ Test") + find(
        o, r"\*\*\*Failed", limit=5), test_context=lambda o: find(o, r"^\s*\d+ - \S+ \(Failed\)", limit=5))
    c.write(tool="ctest", category="test", made_by=cm(name, f", GoogleTest {version('dpkg-query -W -f=${Version} libgtest-dev')}"))


@case(ECO)
def ctest_segfault(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"src/area.cpp": AREA_CPP.replace("double sum = 0;", "double sum = 0;\n    const Shape* first = all.empty() ? nullptr : all.front().get();\n    sum += first->area() * 0;"),
                        "tests/shape_test.cpp": SHAPE_TEST + "TEST(ShapeTest, TotalAreaEmpty) { EXPECT_EQ(shapes::total_area({}), 0.0); }\n"})
    cmake_steps(c, test_causal=lambda o: find(o, r"\*\*\*Exception: SegFault", limit=3),
                test_context=lambda o: find(o, r"^\s*\d+ - \S+ \(SEGFAULT\)", limit=3))
    c.write(tool="ctest", category="test", made_by=cm(name))


@case(ECO)
def ctest_timeout(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    slow = REGISTRY_TEST.replace("TEST(RegistryTest, Missing) {", "TEST(RegistryTest, Missing) {\n    for (volatile long i = 0; ; i++) {}")
    cmake_project(c, **{"tests/registry_test.cpp": slow,
                        "CMakeLists.txt": CMAKE_LISTS.replace("gtest_discover_tests(shapes_test)",
                                                              "gtest_discover_tests(shapes_test PROPERTIES TIMEOUT 3)")})
    cmake_steps(c, test_causal=lambda o: find(o, r"\*\*\*Timeout"), test_context=lambda o: find(o, r"^\s*\d+ - \S+ \(Timeout\)"))
    c.write(tool="ctest", category="test", made_by=cm(name))


CATCH_TEST = """
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <string>
#include <vector>

static std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
        if (ch == sep) { if (!cur.empty()) out.push_back(cur); cur.clear(); }
        else cur += ch;
    }
    out.push_back(cur);
    return out;
}

TEST_CASE("split on commas", "[split]") {
    REQUIRE(split("a,b,c", ',').size() == 3);
    CHECK(split("a,b,c", ',')[1] == "b");
}

TEST_CASE("split keeps empty fields", "[split]") {
    auto parts = split("a,,c", ',');
    REQUIRE(parts.size() == 3);
    CHECK(parts[1] == "");
}

TEST_CASE("split single", "[split]") {
    CHECK(split("abc", ',').size() == 1);
}
"""


@case(ECO)
def catch2_require(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "textkit")
    c.files({"tests/split_test.cpp": CATCH_TEST})
    c.step("Build", "g++ --version | head -1\ng++ -std=c++17 -Wall -O1 -o split_test tests/split_test.cpp")
    c.step("Test", "./split_test --use-colour no",
           causal=lambda o: find(o, r"^split keeps empty fields", r"tests/split_test.cpp:\d+: FAILED:",
                                 r"REQUIRE\( parts.size\(\) == 3 \)", r"^\s+2 == 3"))
    c.write(tool="catch2", category="test", made_by=f"{GXX}, Catch2 {version('dpkg-query -W -f=${Version} catch2')} on make/cpp/gen.py:{name}, run here")


CMOCKA_TEST = """
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "calc.h"

static void test_count_commas(void **state) { (void)state; assert_int_equal(str_count("a,b,c", ','), 2); }
static void test_count_none(void **state) { (void)state; assert_int_equal(str_count("abc", ','), 0); }
static void test_parse(void **state) {
    (void)state;
    double v = 0;
    assert_true(parse_number("2.5", &v));
    assert_true(v == 2.5);
}
static void test_eval_sub(void **state) {
    (void)state;
    int err = 0;
    assert_int_equal((int)eval_rpn("10 4 -", &err), 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_commas), cmocka_unit_test(test_count_none),
        cmocka_unit_test(test_parse), cmocka_unit_test(test_eval_sub),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
"""


@case(ECO)
def cmocka_int_equal(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/unit.c": CMOCKA_TEST,
                    "src/eval.c": EVAL.replace("case '-': stack_push(&st, a - b)", "case '-': stack_push(&st, b - a)")})
    toolchain(c)
    c.step("Build", "make CC=gcc && gcc -g -Iinclude -o unit tests/unit.c src/eval.c src/parse.c src/util.c -lcmocka")
    c.step("Test", "./unit", causal=lambda o: find(o, r"\[  FAILED  \] test_\w+$", r"tests/unit.c:\d+: error", r"^\[\s+ERROR\s+\]|0x[0-9a-f]+ != 0x"))
    c.write(tool="cmocka", category="test", made_by=f"{GCC}, cmocka {version('dpkg-query -W -f=${Version} libcmocka-dev')} on make/cpp/gen.py:{name}, run here")


CHECK_TEST = """
#include <check.h>
#include <stdlib.h>
#include "calc.h"

START_TEST(test_add) { int e = 0; ck_assert_double_eq(eval_rpn("1 2 +", &e), 3.0); }
END_TEST
START_TEST(test_mul) { int e = 0; ck_assert_double_eq(eval_rpn("2 4 *", &e), 8.0); }
END_TEST
START_TEST(test_bad_op) { int e = 0; eval_rpn("1 2 %", &e); ck_assert_int_eq(e, 1); }
END_TEST
START_TEST(test_count) { ck_assert_uint_eq(str_count("a b c", ' '), 2); }
END_TEST

int main(void) {
    Suite *s = suite_create("calc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_add);
    tcase_add_test(tc, test_mul);
    tcase_add_test(tc, test_bad_op);
    tcase_add_test(tc, test_count);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
"""


@case(ECO)
def check_framework(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/check_calc.c": CHECK_TEST,
                    "src/eval.c": EVAL.replace("default: *err = 1; return 0;", "default: return 0;")})
    toolchain(c)
    c.step("Build", "make CC=gcc && gcc -g -Iinclude -o check_calc tests/check_calc.c src/eval.c src/parse.c src/util.c "
           "$(pkg-config --cflags --libs check)")
    c.step("Test", "CK_FORK=yes ./check_calc", causal=lambda o: find(o, r":F:core:test_bad_op:"))
    c.write(tool="check", category="test", made_by=f"{GCC}, Check {version('dpkg-query -W -f=${Version} check')} on make/cpp/gen.py:{name}, run here")


# ---------------------------------------------------------------- infrastructure: a compiler killed for memory

GEN_TABLE = """
# writes src/table.cpp: the lookup table the shape registry uses
print("const int kTable[] = {" + ",".join(str(i * 7 % 1000) for i in range(1_500_000)) + "};")
print("int table_at(int i) { return kTable[i]; }")
"""


@case(ECO)
def oom_cc1plus(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"tools/gen_table.py": GEN_TABLE, "CMakeLists.txt": CMAKE_LISTS.replace(
        "src/area.cpp)", "src/area.cpp src/table.cpp)")})
    c.step("Generate", "python3 tools/gen_table.py > src/table.cpp && ls -l src/table.cpp")
    c.step("Configure", "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release")
    # the job's container allows 250 MB of address space per process: what a small CI runner gives
    c.step("Build", "ulimit -v 250000; cmake --build build -j2", show="cmake --build build -j2",
           causal=lambda o: find(o, r"out of memory allocating"))
    c.write(tool="g++", category="infrastructure",
            made_by=cm(name, " under ulimit -v 250000 (the runner's memory limit)"))


@case(ECO)
def disk_full_objects(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "shapes")
    cmake_project(c, **{"tools/gen_table.py": GEN_TABLE.replace("1_500_000", "300_000"), "CMakeLists.txt":
                        CMAKE_LISTS.replace("src/area.cpp)", "src/area.cpp src/table.cpp)")})
    c.step("Generate", "python3 tools/gen_table.py > src/table.cpp && ls -l src/table.cpp")
    c.step("Configure", "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug")
    # build/ is a 1 MiB tmpfs in a private mount namespace: a runner whose disk is full
    c.step("Build", "unshare -m bash -c 'mkdir -p build/CMakeFiles/shapes.dir/src && mount -t tmpfs -o size=1m tmpfs build/CMakeFiles/shapes.dir/src && "
           "cmake --build build -j2'", show="cmake --build build -j2",
           causal=lambda o: find(o, r"No space left on device"))
    c.write(tool="g++", category="infrastructure", made_by=cm(name, " with the object folder on a full 1 MiB tmpfs"))


# ---------------------------------------------------------------- Meson and autotools

MESON_BUILD = """
project('calc', 'c', version : '0.9.0', default_options : ['warning_level=2', 'c_std=c11'])
inc = include_directories('include')
lib = static_library('calc', 'src/parse.c', 'src/eval.c', 'src/util.c', 'src/version.c', include_directories : inc)
executable('calc', 'src/main.c', include_directories : inc, link_with : lib)
m = meson.get_compiler('c').find_library('m', required : false)
foreach t : ['eval', 'parse', 'count']
  exe = executable('test_' + t, 'tests/test_' + t + '.c', include_directories : inc, link_with : lib, dependencies : m)
  test(t, exe)
endforeach
"""
T_EVAL = ('#include <stdio.h>\n#include "calc.h"\nint main(void) {\n    int e = 0;\n    double v = eval_rpn("10 4 -", &e);\n'
          '    printf("10 4 - = %g\\n", v);\n    if (v != 6) { fprintf(stderr, "expected 6, got %g\\n", v); return 1; }\n    return 0;\n}\n')
T_PARSE = ('#include "calc.h"\nint main(void) {\n    double v;\n    return !(parse_number("2.5", &v) && v == 2.5);\n}\n')
T_COUNT = ('#include "calc.h"\nint main(void) {\n    return str_count("a,b,c", \',\') != 2;\n}\n')


def meson_project(c: Case, **over: str) -> None:
    c_project(c, **{"meson.build": MESON_BUILD, "tests/test_eval.c": T_EVAL, "tests/test_parse.c": T_PARSE,
                    "tests/test_count.c": T_COUNT, **over})


MESON = version("meson --version")


@case(ECO)
def meson_compile_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    meson_project(c, **{"src/parse.c": PARSE.replace("return end != s;", "return end != s")})
    c.step("Configure", "meson setup builddir")
    c.step("Build", "meson compile -C builddir", causal=lambda o: err_block(o, 2, 3) + find(o, r"^FAILED: ", limit=1))
    c.write(tool="meson", category="build", made_by=f"meson {MESON}, ninja, {GCC} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def meson_test_failure(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    meson_project(c, **{"src/eval.c": EVAL.replace("case '-': stack_push(&st, a - b)", "case '-': stack_push(&st, b - a)")})
    c.step("Configure", "meson setup builddir")
    c.step("Build", "meson compile -C builddir")
    c.step("Test", "meson test -C builddir --print-errorlogs",
           causal=lambda o: find(o, r"^\s*\d+/\d+ (calc:)?eval\s+FAIL", r"^expected 6, got", limit=1))
    c.write(tool="meson test", category="test", made_by=f"meson {MESON}, {GCC} on make/cpp/gen.py:{name}, run here")


@case(ECO)
def meson_dependency_missing(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    meson_project(c, **{"meson.build": MESON_BUILD.replace("inc = include_directories('include')",
                                                           "inc = include_directories('include')\njansson = dependency('jansson', version : '>=2.13')")})
    c.step("Configure", "meson setup builddir", causal=lambda o: find(o, r"ERROR: Dependency .*jansson.* not found", limit=1))
    c.write(tool="meson", category="dependency", made_by=f"meson {MESON} on make/cpp/gen.py:{name}, run here")


CONFIGURE_AC = """
AC_INIT([calc], [0.9.0])
AM_INIT_AUTOMAKE([foreign subdir-objects])
AC_PROG_CC
AC_CHECK_LIB([m], [floor])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
"""
MAKEFILE_AM = """
AM_CPPFLAGS = -I$(top_srcdir)/include
bin_PROGRAMS = calc
calc_SOURCES = src/main.c src/parse.c src/eval.c src/util.c src/version.c
check_PROGRAMS = test_eval test_parse test_count
test_eval_SOURCES = tests/test_eval.c src/parse.c src/eval.c src/util.c
test_parse_SOURCES = tests/test_parse.c src/parse.c
test_count_SOURCES = tests/test_count.c src/util.c
TESTS = $(check_PROGRAMS)
"""


def autotools_project(c: Case, **over: str) -> None:
    c_project(c, **{"configure.ac": CONFIGURE_AC, "Makefile.am": MAKEFILE_AM, "tests/test_eval.c": T_EVAL,
                    "tests/test_parse.c": T_PARSE, "tests/test_count.c": T_COUNT, **over})
    c.sh("rm -f Makefile")
    c.step("Bootstrap", "autoreconf -fi")


@case(ECO)
def autoconf_pkg_missing(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    autotools_project(c, **{"configure.ac": CONFIGURE_AC.replace("AC_CHECK_LIB([m], [floor])",
                                                                 "AC_CHECK_LIB([m], [floor])\nPKG_CHECK_MODULES([JANSSON], [jansson >= 2.13])")})
    c.step("Configure", "./configure", causal=lambda o: find(o, r"^configure: error: Package requirements", r"No package 'jansson' found|Package 'jansson', required by .* not found", limit=1))
    c.write(tool="autoconf", category="dependency", made_by=f"{version('autoconf --version')}, {version('pkg-config --version')} (pkg-config) on make/cpp/gen.py:{name}, run here")


@case(ECO)
def automake_make_check(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    autotools_project(c, **{"src/eval.c": EVAL.replace("case '-': stack_push(&st, a - b)", "case '-': stack_push(&st, b - a)")})
    c.step("Configure", "./configure")
    c.step("Build", "make -j2")
    c.step("Test", "make check -j2 || { cat test-suite.log; exit 1; }",
           causal=lambda o: find(o, r"^FAIL: test_\w+", r"^FAIL test_\w+ \(exit status", r"^expected 6, got", limit=1), context=lambda o: find(o, r"^# FAIL: ", limit=1))
    c.write(tool="automake", category="test", made_by=f"{version('automake --version')}, {MAKE} on make/cpp/gen.py:{name}, run here")


TSAN_TEST = """
#include <pthread.h>
#include <stdio.h>
#include "calc.h"

static stack_t_ shared = { {0}, 0 };

static void *pusher(void *arg) {
    for (int i = 0; i < 8; i++) stack_push(&shared, (double)i);
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, pusher, NULL);
    pthread_create(&b, NULL, pusher, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("pushed %zu values\\n", shared.len);
    return 0;
}
"""


@case(ECO)
def tsan_data_race(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/tsan_test.c": TSAN_TEST})
    toolchain(c)
    c.step("Build", "make CC=gcc\ngcc -g -O1 -fsanitize=thread -Iinclude -o tsan_test tests/tsan_test.c src/util.c -lpthread")
    c.step("Test (TSan)", "./tsan_test", env={"TSAN_OPTIONS": "halt_on_error=1"},
           causal=lambda o: find(o, r"WARNING: ThreadSanitizer: data race", r"#\d+ stack_push .*src/util\.c:\d+", r"^SUMMARY: ThreadSanitizer", limit=2))
    c.write(tool="tsan", category="test", made_by=f"{GCC} -fsanitize=thread on make/cpp/gen.py:{name}, run here")


LEAK_TEST = """
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "calc.h"

static char *label(double v) {
    char *out = malloc(32);
    snprintf(out, 32, "value=%g", v);
    return out;
}

int main(void) {
    int err = 0;
    for (int i = 0; i < 3; i++) {
        char *l = label(eval_rpn("2 3 *", &err));
        if (i < 2) free(l); else puts(l);
    }
    return 0;
}
"""


@case(ECO)
def lsan_leak(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "calc")
    c_project(c, **{"tests/leak_test.c": LEAK_TEST})
    toolchain(c)
    c.step("Build", "make CC=gcc\ngcc -g -fsanitize=address -Iinclude -o leak_test tests/leak_test.c src/eval.c src/parse.c src/util.c")
    c.step("Test (ASan)", "./leak_test", env={"ASAN_OPTIONS": "detect_leaks=1"},
           causal=lambda o: find(o, r"ERROR: LeakSanitizer: detected memory leaks", r"^Direct leak of", r"#\d+ .* in (label|main) .*tests/leak_test\.c",
                                 r"^SUMMARY: AddressSanitizer", limit=2))
    c.write(tool="lsan", category="test", made_by=f"{GCC} -fsanitize=address (LeakSanitizer) on make/cpp/gen.py:{name}, run here")
