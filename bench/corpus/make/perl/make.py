"""Perl cases: prove (TAP::Harness over Test::More), `perl -c` and perlcritic failing on a small module, run here
with Debian's perl, wrapped in the five CI shapes.

    python3 bench/corpus/make/perl/make.py [CASE...]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Step, cleanup, env, grep, project
from maker import Cases, failing, make_all, passing
from record import run, write_case

Made = tuple[list[Step], str, str, str]

CART = '''package Shop::Cart;

use strict;
use warnings;
use Carp qw(croak);
use List::Util qw(sum0);

sub new {
    my ($class, %args) = @_;
    return bless { items => [], currency => $args{currency} // 'EUR', discount => 0 }, $class;
}

sub add {
    my ($self, $name, $price, $qty) = @_;
    croak "negative price for $name" if $price < 0;
    push @{ $self->{items} }, { name => $name, price => $price, qty => $qty // 1 };
    return $self;
}

sub discount {
    my ($self, $percent) = @_;
    $self->{discount} = $percent / 100;
    return $self;
}

sub total {
    my ($self) = @_;
    my $sum = sum0 map { $_->{price} * $_->{qty} } @{ $self->{items} };
    return sprintf '%.2f', $sum * (1 - $self->{discount});
}

sub names {
    my ($self) = @_;
    return [ sort map { $_->{name} } @{ $self->{items} } ];
}

1;
'''

TEST = '''use strict;
use warnings;
use Test::More tests => 6;

use_ok('Shop::Cart');

my $cart = Shop::Cart->new;
is($cart->total, '0.00', 'empty cart');

$cart->add('tea', 2.5)->add('cake', 3, 2);
is($cart->total, '8.50', 'sums price times quantity');

$cart->discount(10);
is($cart->total, '7.65', 'applies the discount');

is_deeply($cart->names, [qw(cake tea)], 'names are sorted');

eval { $cart->add('bad', -1) };
like($@, qr/negative price/, 'rejects negative prices');
'''

TEST2 = '''use strict;
use warnings;
use Test::More;

use Shop::Cart;

subtest 'currency' => sub {
    my $cart = Shop::Cart->new(currency => 'GBP');
    is($cart->{currency}, 'GBP', 'keeps currency');
    ok(!Shop::Cart->new->{discount}, 'no discount by default');
};

done_testing;
'''


def files(over: dict[str, str | None]) -> dict[str, str]:
    f: dict[str, str | None] = {"lib/Shop/Cart.pm": CART, "t/01-cart.t": TEST, "t/02-currency.t": TEST2,
                                "Makefile.PL": "use ExtUtils::MakeMaker;\nWriteMakefile(NAME => 'Shop::Cart', "
                                               "VERSION_FROM => 'lib/Shop/Cart.pm');\n"}
    f.update(over)
    return {k: v for k, v in f.items() if v is not None}


def pl_case(name: str, shape: str, over: dict[str, str | None], cmd: str, tool: str, category: str,
            causal: Callable[[list[str]], list[int]], pre: list[str] = (), ctx: str | None = None) -> Made:
    root = project(name, shape, files(over))
    o0, _ = run("perl -v | sed -n 2p", cwd=root, env=env())
    steps = [Step("Perl", "perl -v | sed -n 2p", o0)]
    steps += [passing(p, root, env()) for p in pre]
    steps.append(failing(cmd, root, env(), tool.title(), causal, ctx=ctx))
    cleanup(root)
    return steps, tool, category, f"{tool} ({o0[0].strip()})"


def prove_causal(o: list[str]) -> list[int]:
    """Test::More's `#   Failed test` diagnostics (name, `at FILE line N`, got/expected), a die message, and a
    plan mismatch; not the harness's own Dubious/summary lines."""
    idx: list[int] = []
    for i, t in enumerate(o):
        s = t.strip()
        if re.match(r"^#\s+Failed test", s):
            idx.append(i)
            j = i + 1
            while j < len(o) and re.match(r"^#\s{2,}\S", o[j].strip()) and not re.match(r"^#\s+Failed test", o[j].strip()):
                idx.append(j)
                j += 1
        elif (re.match(r"^not ok \d+", s) and "# TODO" not in s) or \
                (re.search(r" at \S+ line \d+\.?$", s) and not s.startswith("#")) or \
                re.match(r"^# Looks like you planned", s):
            idx.append(i)
    return sorted(set(idx))


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


@case
def prove_is_failure(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"lib/Shop/Cart.pm": CART.replace("$percent / 100", "$percent / 1000")},
                   "prove -l t", "prove", "test", prove_causal, pre=["perl -Ilib -c lib/Shop/Cart.pm"],
                   ctx=r"^Result: FAIL|^Files=")


@case
def prove_verbose_is_deeply(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"lib/Shop/Cart.pm": CART.replace("[ sort map", "[ map")}, "prove -lv t", "prove",
                   "test", prove_causal, ctx=r"^Result: FAIL")


@case
def prove_dies(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"lib/Shop/Cart.pm": CART.replace("sub names {", "sub item_names {")}, "prove -l t",
                   "prove", "test", prove_causal, ctx=r"^Result: FAIL")


@case
def prove_plan_mismatch(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"t/01-cart.t": TEST.replace("tests => 6", "tests => 7")}, "prove -l -j2 t",
                   "prove", "test", prove_causal, ctx=r"^Result: FAIL")


@case
def prove_subtest(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"lib/Shop/Cart.pm": CART.replace("$args{currency} // 'EUR'", "'EUR'")},
                   "prove -lr --timer t", "prove", "test", prove_causal, ctx=r"^Result: FAIL")


@case
def perl_syntax_check(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"lib/Shop/Cart.pm": CART.replace("qty => $qty // 1 };", "qty => $qty // 1 ;")
},
                   "perl -Ilib -wc lib/Shop/Cart.pm", "perl", "lint",
                   lambda o: grep(o, r"^syntax error at ", r"had compilation errors"))


@case
def perlcritic_violations(name: str, shape: str) -> Made:
    bad = CART.replace("use strict;\nuse warnings;\n", "").replace("my ($self) = @_;\n    my $sum",
                                                                  "my ($self) = @_;\n    open(FH, '<', '/tmp/x');\n"
                                                                  "    my $sum")
    return pl_case(name, shape, {"lib/Shop/Cart.pm": bad}, "perlcritic --severity 4 --verbose 8 lib", "perlcritic",
                   "lint", lambda o: grep(o, r"^\[\S+\] ", limit=20), pre=["prove -l t"])



@case
def make_test_makemaker(name: str, shape: str) -> Made:
    return pl_case(name, shape, {"lib/Shop/Cart.pm": CART.replace("'%.2f'", "'%.1f'").replace(
        "package Shop::Cart;\n", "package Shop::Cart;\n\nour $VERSION = '0.04';\n")},
                   "perl Makefile.PL && make && make test", "make test", "test", prove_causal,
                   ctx=r"^Result: FAIL|^Files=")



@case
def podchecker_errors(name: str, shape: str) -> Made:
    pod = CART.replace("1;\n", """1;

__END__

=head1 NAME

Shop::Cart - a shopping cart

=head1 METHODS

=over 4

=item add($name, $price, $qty)

Adds an item.

=item total

Returns the total, formatted with two decimals. See L<Shop::Money/format.

=head1 AUTHOR

The shop team.
""")
    return pl_case(name, shape, {"lib/Shop/Cart.pm": pod}, "podchecker lib/Shop/Cart.pm", "podchecker", "lint",
                   lambda o: grep(o, r"^\*\*\* ERROR: ", r"has \d+ pod syntax error", limit=5), pre=["prove -l t"])


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("perl", cname, steps, shape, tool=tool, category=category, seed=500 + n,
                        made_by=f"{made} (Debian) on a small generated module (make/perl/make.py:{fn.__name__}), "
                                "run here; shape by make/shapes.py", job="test" if category == "test" else "ci")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=2, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
