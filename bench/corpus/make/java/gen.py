"""Java cases: Maven (compiler, Surefire with JUnit 4 and JUnit 5, dependency resolution, enforcer, javadoc,
dependency:analyze, checkstyle and a licence-header check run through antrun, POM errors), plain javac, JUnitCore,
the JUnit Platform console launcher and the checkstyle CLI.

Maven runs against Debian's /usr/share/maven-repo, served as `central` through a settings file (no network):
a cold local repository shows the downloads a CI cache miss shows; a warm one is reused like a CI cache."""

from __future__ import annotations

from gen import case
from ws import Case, block, find, version

ECO = "java"
MVN = version("mvn -v 2>&1 | sed 's/\\x1b\\[[0-9;]*m//g'")
JAVAC = version("javac -version 2>&1")
WARM = "/tmp/corpus-b-m2"
SETTINGS = """
<settings>
  <localRepository>{repo}</localRepository>
  <profiles>
    <profile>
      <id>ci</id>
      <repositories>
        <repository><id>central</id><url>file:///usr/share/maven-repo</url>
          <releases><checksumPolicy>ignore</checksumPolicy></releases><snapshots><enabled>false</enabled></snapshots></repository>
      </repositories>
      <pluginRepositories>
        <pluginRepository><id>central</id><url>file:///usr/share/maven-repo</url>
          <releases><checksumPolicy>ignore</checksumPolicy></releases><snapshots><enabled>false</enabled></snapshots></pluginRepository>
      </pluginRepositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>ci</activeProfile></activeProfiles>
</settings>
"""
PLUGIN = ("<plugin><groupId>org.apache.maven.plugins</groupId><artifactId>{a}</artifactId><version>{v}</version>"
          "{extra}</plugin>")
BASE_PLUGINS = [("maven-compiler-plugin", "3.10.1", ""), ("maven-surefire-plugin", "2.22.3", ""),
                ("maven-resources-plugin", "3.3.0", ""), ("maven-jar-plugin", "3.3.0", ""),
                ("maven-clean-plugin", "3.2.0", "")]
JUNIT4 = "<dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version><scope>test</scope></dependency>"
JUPITER = ("<dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter-api</artifactId><version>5.9.2</version>"
           "<scope>test</scope></dependency><dependency><groupId>org.junit.jupiter</groupId>"
           "<artifactId>junit-jupiter-engine</artifactId><version>5.9.2</version><scope>test</scope></dependency>")


def pom(deps: str = JUNIT4, plugins: str = "", compiler: str = "", props: str = "", base: bool = True) -> str:
    plug = "".join(PLUGIN.format(a=a, v=v, extra=compiler if a == "maven-compiler-plugin" else x)
                   for a, v, x in BASE_PLUGINS) if base else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 http://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>invoice</artifactId>
  <version>1.4.0-SNAPSHOT</version>
  <packaging>jar</packaging>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>{props}
  </properties>
  <dependencies>
    {deps}
  </dependencies>
  <build>
    <plugins>
      {plug}
      {plugins}
    </plugins>
  </build>
</project>
"""


HEADER = "/*\n * Copyright 2026 Acme Corp.\n * Licensed under the Apache License, Version 2.0.\n */\n"
MONEY = HEADER + """package com.acme.invoice;

import java.util.Objects;

/** An amount of money in cents. */
public final class Money implements Comparable<Money> {
    public static final Money ZERO = new Money(0);
    private final long cents;

    public Money(long cents) {
        this.cents = cents;
    }

    /**
     * Parses "12.34".
     *
     * @param text the amount
     * @return the money
     */
    public static Money parse(String text) {
        String[] parts = text.trim().split("\\\\.");
        long whole = Long.parseLong(parts[0]);
        long frac = parts.length > 1 ? Long.parseLong(parts[1]) : 0;
        return new Money(whole * 100 + (whole < 0 ? -frac : frac));
    }

    public long cents() {
        return cents;
    }

    public Money plus(Money other) {
        return new Money(cents + other.cents);
    }

    public Money times(int quantity) {
        return new Money(cents * quantity);
    }

    /**
     * A percentage of this amount, rounded half up.
     *
     * @param percent the percentage
     * @return the share
     */
    public Money percent(int percent) {
        return new Money(Math.round(cents * percent / 100.0));
    }

    @Override
    public int compareTo(Money o) {
        return Long.compare(cents, o.cents);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Money && ((Money) o).cents == cents;
    }

    @Override
    public int hashCode() {
        return Objects.hash(cents);
    }

    @Override
    public String toString() {
        return String.format("%d.%02d", cents / 100, Math.abs(cents % 100));
    }
}
"""
LINE = HEADER + """package com.acme.invoice;

/** One line of an invoice. */
public final class LineItem {
    private final String sku;
    private final int quantity;
    private final Money unitPrice;

    public LineItem(String sku, int quantity, Money unitPrice) {
        if (quantity <= 0) {
            throw new IllegalArgumentException("quantity must be positive: " + quantity);
        }
        this.sku = sku;
        this.quantity = quantity;
        this.unitPrice = unitPrice;
    }

    public String sku() {
        return sku;
    }

    public int quantity() {
        return quantity;
    }

    public Money total() {
        return unitPrice.times(quantity);
    }
}
"""
TAX = HEADER + """package com.acme.invoice;

import java.util.HashMap;
import java.util.Map;

/** VAT rates by region, in percent. */
public final class TaxTable {
    private final Map<String, Integer> rates = new HashMap<>();

    public TaxTable() {
        rates.put("DE", 19);
        rates.put("FR", 20);
        rates.put("NL", 21);
    }

    public int rate(String region) {
        Integer r = rates.get(region);
        if (r == null) {
            throw new IllegalArgumentException("unknown region " + region);
        }
        return r;
    }
}
"""
INVOICE = HEADER + """package com.acme.invoice;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** An invoice: lines, a region, totals. */
public final class Invoice {
    private final List<LineItem> lines = new ArrayList<>();
    private final String region;
    private final TaxTable taxes;

    public Invoice(String region, TaxTable taxes) {
        this.region = region;
        this.taxes = taxes;
    }

    public Invoice add(LineItem line) {
        lines.add(line);
        return this;
    }

    public List<LineItem> lines() {
        return Collections.unmodifiableList(lines);
    }

    public Money net() {
        Money sum = Money.ZERO;
        for (LineItem l : lines) {
            sum = sum.plus(l.total());
        }
        return sum;
    }

    public Money tax() {
        return net().percent(taxes.rate(region));
    }

    public Money gross() {
        return net().plus(tax());
    }
}
"""
MONEY_TEST = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class MoneyTest {
    @Test
    public void parsesWholeAndCents() {
        assertEquals(1234, Money.parse("12.34").cents());
    }

    @Test
    public void parsesWhole() {
        assertEquals(700, Money.parse("7").cents());
    }

    @Test
    public void formats() {
        assertEquals("3.05", new Money(305).toString());
    }

    @Test
    public void percentRoundsHalfUp() {
        assertEquals(new Money(25), new Money(125).percent(20));
    }
}
"""
INVOICE_TEST = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import org.junit.Test;

public class InvoiceTest {
    private final TaxTable taxes = new TaxTable();

    @Test
    public void netSumsLines() {
        Invoice inv = new Invoice("DE", taxes)
                .add(new LineItem("A-1", 2, Money.parse("10.00")))
                .add(new LineItem("B-2", 1, Money.parse("5.50")));
        assertEquals(Money.parse("25.50"), inv.net());
    }

    @Test
    public void taxUsesRegionRate() {
        Invoice inv = new Invoice("FR", taxes).add(new LineItem("A-1", 1, Money.parse("100.00")));
        assertEquals(Money.parse("20.00"), inv.tax());
    }

    @Test
    public void grossIsNetPlusTax() {
        Invoice inv = new Invoice("NL", taxes).add(new LineItem("A-1", 1, Money.parse("100.00")));
        assertEquals(Money.parse("121.00"), inv.gross());
    }

    @Test
    public void rejectsZeroQuantity() {
        assertThrows(IllegalArgumentException.class, () -> new LineItem("A-1", 0, Money.ZERO));
    }
}
"""
TAX_TEST = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class TaxTableTest {
    @Test
    public void germany() {
        assertEquals(19, new TaxTable().rate("DE"));
    }

    @Test(expected = IllegalArgumentException.class)
    public void unknownRegion() {
        new TaxTable().rate("XX");
    }
}
"""
SRC = "src/main/java/com/acme/invoice/"
TST = "src/test/java/com/acme/invoice/"


def project(c: Case, pom_xml: str | None = None, **over: str) -> None:
    files = {"pom.xml": pom_xml or pom(), SRC + "Money.java": MONEY, SRC + "LineItem.java": LINE,
             SRC + "TaxTable.java": TAX, SRC + "Invoice.java": INVOICE, TST + "MoneyTest.java": MONEY_TEST,
             TST + "InvoiceTest.java": INVOICE_TEST, TST + "TaxTableTest.java": TAX_TEST}
    files.update(over)
    c.files({k: v for k, v in files.items() if v is not None})


def mvn(c: Case, goals: str, causal=None, context=None, cold: bool = False, ntp: bool = False,
        name: str = "Build") -> list[str]:
    cold = cold or c.seed % 4 == 0  # a quarter of the jobs start with an empty cache, as CI runs without one do
    repo = c.dir / ".m2/repository" if cold else WARM
    c.files({".mvn/settings.xml": SETTINGS.format(repo=repo)})
    flags = "-B" + (" -ntp" if ntp else "")
    return c.step(name, f"mvn {flags} -s .mvn/settings.xml {goals}", causal=causal, context=context)


def setup(c: Case) -> None:
    c.step("Set up JDK", "java -version 2>&1 && mvn -v 2>&1 | sed 's/\\x1b\\[[0-9;]*m//g'")


def made(name: str, extra: str = "") -> str:
    return f"{MVN}, {JAVAC}{extra} against Debian's maven-repo on make/java/gen.py:{name}, run here"


def failed_goal(o: list[str]) -> list[int]:
    return find(o, r"^\[ERROR\] Failed to execute goal ", limit=1)


def compile_errors(o: list[str]) -> list[int]:
    return find(o, r"^\[ERROR\] /\S+\.java:\[\d+,\d+\] ", r"^\[ERROR\]\s+(symbol|location|required|found):", limit=6)


def surefire(o: list[str], limit: int = 5) -> list[int]:
    """The failing test's header, its assertion or exception line and the frames in the project's tests."""
    heads = find(o, r"<<< (FAILURE|ERROR)!$", limit=limit + 3)
    heads = [i for i in heads if not o[i].startswith("[ERROR] Tests run:")]
    out = list(heads)
    for i in heads:
        out += [j for j in range(i + 1, min(i + 8, len(o))) if o[j].strip() and (
            not o[j].startswith("\t") or "com.acme" in o[j]) and not o[j].startswith("[")]
    return out


# ---------------------------------------------------------------- compile

@case(ECO)
def mvn_cannot_find_symbol(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "Invoice.java": INVOICE.replace("sum = sum.plus(l.total());", "sum = sum.plus(l.subtotal());")})
    setup(c)
    mvn(c, "verify", compile_errors, cold=True)
    c.write(tool="maven-compiler-plugin", category="build", made_by=made(name, ", cold local repository"))


@case(ECO)
def mvn_incompatible_types(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "TaxTable.java": TAX.replace("Integer r = rates.get(region);", "String r = rates.get(region);")})
    setup(c)
    mvn(c, "verify", compile_errors, ntp=True)
    c.write(tool="maven-compiler-plugin", category="build", made_by=made(name))


@case(ECO)
def mvn_several_compile_errors(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "Money.java": MONEY.replace("return new Money(cents + other.cents);", "return new Money(cents + other.cent);"),
                  SRC + "LineItem.java": LINE.replace("public Money total() {\n        return unitPrice.times(quantity);\n    }",
                                                      "public Money total() {\n        if (quantity > 0) {\n            return unitPrice.times(quantity);\n        }\n    }")})
    setup(c)
    mvn(c, "-ntp verify", compile_errors)
    c.write(tool="maven-compiler-plugin", category="build", made_by=made(name))


@case(ECO)
def mvn_test_compile_error(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{TST + "InvoiceTest.java": INVOICE_TEST.replace('new Invoice("FR", taxes)', 'new Invoice("FR")')})
    setup(c)
    mvn(c, "verify", compile_errors, ntp=True)
    c.write(tool="maven-compiler-plugin", category="build", made_by=made(name))


@case(ECO)
def mvn_werror_deprecation(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    comp = "<configuration><compilerArgs><arg>-Xlint:all</arg><arg>-Werror</arg></compilerArgs></configuration>"
    project(c, pom(compiler=comp), **{SRC + "TaxTable.java": TAX.replace('rates.put("DE", 19);', 'rates.put("DE", new Integer(19));')})
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"^\[(WARNING|ERROR)\] /\S+\.java:\[\d+,\d+\] .*deprecated", r"warnings found and -Werror specified",
                                    limit=2), ntp=True)
    c.write(tool="maven-compiler-plugin", category="build", made_by=made(name))


# ---------------------------------------------------------------- surefire

@case(ECO)
def surefire_assert_equals(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "Money.java": MONEY.replace('"%d.%02d"', '"%d,%02d"')})
    setup(c)
    mvn(c, "verify", surefire, context=lambda o: find(o, r"^\[ERROR\] Tests run: \d+, Failures: [1-9]", limit=1))
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit 4.13.2"))


@case(ECO)
def surefire_npe(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "TaxTable.java": TAX.replace("if (r == null) {\n            throw new IllegalArgumentException(\"unknown region \" + region);\n        }\n", ""),
                  TST + "InvoiceTest.java": INVOICE_TEST.replace('new Invoice("NL", taxes)', 'new Invoice("BE", taxes)')})
    setup(c)
    mvn(c, "verify", lambda o: surefire(o) + find(o, r"at com\.acme\.invoice\.(TaxTable|Invoice)\.", limit=2), ntp=True)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit 4.13.2"))


@case(ECO)
def surefire_two_classes_fail(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "Money.java": MONEY.replace('"%d.%02d"', '"%d.%d"'),
                  SRC + "TaxTable.java": TAX.replace('rates.put("FR", 20);', 'rates.put("FR", 21);')})
    setup(c)
    mvn(c, "verify", surefire, ntp=True)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit 4.13.2"))


@case(ECO)
def surefire_timeout(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{TST + "TaxTableTest.java": TAX_TEST.replace("@Test\n    public void germany() {",
                                                              "@Test(timeout = 500)\n    public void germany() throws Exception {\n        Thread.sleep(3000);")})
    setup(c)
    mvn(c, "verify", lambda o: surefire(o) + find(o, r"TestTimedOutException", limit=1), ntp=True)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit 4.13.2"))


@case(ECO)
def surefire_vm_exit(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "TaxTable.java": TAX.replace('throw new IllegalArgumentException("unknown region " + region);',
                                                     'System.err.println("unknown region " + region);\n            System.exit(3);')})
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"The forked VM terminated without properly saying goodbye", r"Process Exit Code: 3", limit=1),
        ntp=True)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit 4.13.2"))


JUPITER_TEST = """package com.acme.invoice;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class MoneyJupiterTest {
    @Test
    @DisplayName("zero is zero")
    void zero() {
        assertEquals(0, Money.ZERO.cents());
    }

    @ParameterizedTest
    @CsvSource({"12.34,1234", "0.05,5", "-1.50,-150", "7,700"})
    void parses(String text, long cents) {
        assertEquals(cents, Money.parse(text).cents(), () -> "parse " + text);
    }
}
"""


@case(ECO)
def surefire_junit5_parameterized(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    deps = JUPITER + ("<dependency><groupId>org.junit.jupiter</groupId><artifactId>junit-jupiter-params</artifactId>"
                      "<version>5.9.2</version><scope>test</scope></dependency>")
    project(c, pom(deps=deps), **{TST + "MoneyTest.java": None, TST + "InvoiceTest.java": None, TST + "TaxTableTest.java": None,
                                  TST + "MoneyJupiterTest.java": JUPITER_TEST,
                                  SRC + "Money.java": MONEY.replace("(whole < 0 ? -frac : frac)", "frac")})
    setup(c)
    mvn(c, "verify", surefire)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit Jupiter 5.9.2"))


# ---------------------------------------------------------------- dependencies and POM

@case(ECO)
def mvn_missing_artifact(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    deps = JUNIT4 + "<dependency><groupId>com.google.guava</groupId><artifactId>guava</artifactId><version>33.2.1-jre</version></dependency>"
    project(c, pom(deps=deps))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"^\[ERROR\] Failed to execute goal on project invoice: Could not resolve dependencies",
                                    r"Could not find artifact com.google.guava", limit=1))
    c.write(tool="maven", category="dependency", made_by=made(name))


@case(ECO)
def mvn_plugin_unresolvable(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, pom(plugins=PLUGIN.format(a="maven-shade-plugin", v="3.5.3", extra="<executions><execution><phase>package</phase>"
                                         "<goals><goal>shade</goal></goals></execution></executions>")))
    setup(c)
    mvn(c, "package", lambda o: find(o, r"^\[ERROR\] Plugin org.apache.maven.plugins:maven-shade-plugin:3.5.3 or one of its dependencies could not be resolved",
                                     limit=1), ntp=True)
    c.write(tool="maven", category="dependency", made_by=made(name))


@case(ECO)
def mvn_pom_not_parseable(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, pom().replace("<packaging>jar</packaging>", "<packaging>jar</packagin>"))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"Non-parseable POM", limit=2))
    c.write(tool="maven", category="config", made_by=made(name))


@case(ECO)
def mvn_missing_dependency_version(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, pom(deps=JUNIT4.replace("<version>4.13.2</version>", "")))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"'dependencies.dependency.version' for junit:junit:jar is missing", limit=2), ntp=True)
    c.write(tool="maven", category="config", made_by=made(name))


@case(ECO)
def mvn_unknown_phase(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c)
    setup(c)
    mvn(c, "clean verfy", lambda o: find(o, r"Unknown lifecycle phase \"verfy\"", limit=1), ntp=True)
    c.write(tool="maven", category="config", made_by=made(name))


# ---------------------------------------------------------------- plugins that check

ENFORCER = ("<executions><execution><id>enforce</id><goals><goal>enforce</goal></goals><configuration><rules>{rules}</rules>"
            "</configuration></execution></executions>")


@case(ECO)
def enforcer_java_version(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    rules = "<requireMavenVersion><version>3.6.3</version></requireMavenVersion><requireJavaVersion><version>[21,)</version></requireJavaVersion>"
    project(c, pom(plugins=PLUGIN.format(a="maven-enforcer-plugin", v="3.1.0", extra=ENFORCER.format(rules=rules))))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"RequireJavaVersion failed", r"Detected JDK Version: .* is not in the allowed range", limit=1))
    c.write(tool="maven-enforcer-plugin", category="config", made_by=made(name))


@case(ECO)
def enforcer_banned_dependency(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    rules = ("<bannedDependencies><excludes><exclude>junit:junit:[,4.13.2]</exclude></excludes>"
             "<message>JUnit 4 is banned: migrate tests to JUnit 5</message></bannedDependencies>")
    project(c, pom(plugins=PLUGIN.format(a="maven-enforcer-plugin", v="3.1.0", extra=ENFORCER.format(rules=rules))))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"BannedDependencies failed", r"JUnit 4 is banned", r"junit:junit:jar:4.13.2", limit=1),
        ntp=True)
    c.write(tool="maven-enforcer-plugin", category="dependency", made_by=made(name))


@case(ECO)
def javadoc_doclint(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    jd = ("<configuration><doclint>all</doclint><failOnWarnings>true</failOnWarnings></configuration>"
          "<executions><execution><id>docs</id><goals><goal>javadoc</goal></goals><phase>verify</phase></execution></executions>")
    project(c, pom(plugins=PLUGIN.format(a="maven-javadoc-plugin", v="3.4.1", extra=jd)),
            **{SRC + "Money.java": MONEY.replace("     * @param percent the percentage", "     * @param pct the percentage")
               .replace("/** An amount of money in cents. */", "/** An amount of money in cents, e.g. <b>12.34 EUR. */")})
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"^\[ERROR\] /\S+\.java:\d+: error: ", limit=4)
        + find(o, r"^\[ERROR\] Failed to execute goal org.apache.maven.plugins:maven-javadoc-plugin", limit=1), ntp=True)
    c.write(tool="maven-javadoc-plugin", category="lint", made_by=made(name))


@case(ECO)
def dependency_analyze(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    dep = ("<executions><execution><id>analyze</id><goals><goal>analyze-only</goal></goals><configuration>"
           "<failOnWarning>true</failOnWarning></configuration></execution></executions>")
    deps = JUNIT4 + "<dependency><groupId>commons-io</groupId><artifactId>commons-io</artifactId><version>2.11.0</version></dependency>"
    project(c, pom(deps=deps, plugins=PLUGIN.format(a="maven-dependency-plugin", v="3.5.0", extra=dep)))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"Unused declared dependencies found", r"^\[(WARNING|ERROR)\]\s+commons-io:commons-io:jar", limit=1)
        + find(o, r"Dependency problems found", limit=1), ntp=True)
    c.write(tool="maven-dependency-plugin", category="lint", made_by=made(name))


CHECKSTYLE_XML = """<?xml version="1.0"?>
<!DOCTYPE module PUBLIC "-//Checkstyle//DTD Checkstyle Configuration 1.3//EN" "https://checkstyle.org/dtds/configuration_1_3.dtd">
<module name="Checker">
  <module name="FileTabCharacter"/>
  <module name="TreeWalker">
    <module name="UnusedImports"/>
    <module name="NeedBraces"/>
    <module name="MagicNumber"><property name="ignoreNumbers" value="-1, 0, 1, 2, 100"/></module>
    <module name="MemberName"/>
  </module>
</module>
"""
ANTRUN_CS = """<executions><execution><id>checkstyle</id><phase>validate</phase><goals><goal>run</goal></goals><configuration><target>
  <taskdef resource="com/puppycrawl/tools/checkstyle/ant/checkstyle-ant-task.properties" classpathref="maven.plugin.classpath"/>
  <checkstyle config="config/checkstyle.xml" failOnViolation="true"><fileset dir="src/main/java" includes="**/*.java"/>
    <formatter type="plain"/></checkstyle>
</target></configuration></execution></executions>
<dependencies><dependency><groupId>com.puppycrawl.tools</groupId><artifactId>checkstyle</artifactId><version>8.36.1</version></dependency></dependencies>"""
BAD_STYLE = {SRC + "TaxTable.java": TAX.replace("import java.util.Map;", "import java.util.Map;\nimport java.util.List;")
             .replace('if (r == null) {\n            throw new IllegalArgumentException("unknown region " + region);\n        }',
                      'if (r == null) throw new IllegalArgumentException("unknown region " + region);'),
             SRC + "LineItem.java": LINE.replace("private final int quantity;", "private final int quantity;\n    private int Max_Lines = 250;")}


@case(ECO)
def antrun_checkstyle(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, pom(plugins=PLUGIN.format(a="maven-antrun-plugin", v="3.1.0", extra=ANTRUN_CS)),
            **{"config/checkstyle.xml": CHECKSTYLE_XML, **BAD_STYLE})
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"\.java:\d+(:\d+)?: .*\[\w+\]$", limit=10) + find(o, r"Got \d+ errors", limit=1))
    c.write(tool="checkstyle", category="lint", made_by=made(name, ", checkstyle 8.36.1 through maven-antrun-plugin"))


ANTRUN_LICENSE = """<executions><execution><id>license-headers</id><phase>validate</phase><goals><goal>run</goal></goals><configuration><target>
  <fileset id="unlicensed" dir="src" includes="**/*.java"><not><contains text="Licensed under the Apache License"/></not></fileset>
  <pathconvert property="unlicensed.list" refid="unlicensed" pathsep="${line.separator}"/>
  <fail message="Files without the Apache licence header:${line.separator}${unlicensed.list}">
    <condition><resourcecount refid="unlicensed" when="greater" count="0"/></condition>
  </fail>
</target></configuration></execution></executions>"""


@case(ECO)
def antrun_license_headers(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, pom(plugins=PLUGIN.format(a="maven-antrun-plugin", v="3.1.0", extra=ANTRUN_LICENSE)),
            **{SRC + "Discount.java": "package com.acme.invoice;\n\n/** A discount. */\npublic final class Discount {\n}\n",
               SRC + "TaxTable.java": TAX.replace(HEADER, "")})
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"Files without the Apache licence header", r"/(Discount|TaxTable)\.java$", limit=2), ntp=True)
    c.write(tool="maven-antrun-plugin", category="lint", made_by=made(name, ", an Ant licence-header check"))


@case(ECO)
def checkstyle_cli(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{"config/checkstyle.xml": CHECKSTYLE_XML, **BAD_STYLE})
    c.step("Set up JDK", "java -version 2>&1")
    c.step("Checkstyle", "checkstyle -c config/checkstyle.xml src/main/java",
           causal=lambda o: find(o, r"^\[(ERROR|WARN)\] .*\.java:\d+", limit=10))
    c.write(tool="checkstyle", category="lint", made_by=f"Checkstyle 8.36.1 (Debian), {JAVAC} on make/java/gen.py:{name}, run here")


# ---------------------------------------------------------------- plain javac and JUnit runners

CP4 = "/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar"


@case(ECO)
def javac_plain_errors(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "Invoice.java": INVOICE.replace("return net().plus(tax());", "return net().plus(tax);")
                  .replace("import java.util.Collections;\n", "")})
    c.step("Compile", "javac -version\nmkdir -p out && javac -Xlint:unchecked -d out $(find src/main/java -name '*.java')",
           causal=lambda o: block(o, r"\.java:\d+: error: ", 4, 5, stop=r"\.java:\d+: |^\d+ errors?$"))
    c.write(tool="javac", category="build", made_by=f"{JAVAC} on make/java/gen.py:{name}, run here")


@case(ECO)
def junitcore_failures(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "LineItem.java": LINE.replace("if (quantity <= 0) {", "if (quantity < 0) {"),
                  SRC + "Money.java": MONEY.replace("long frac = parts.length > 1 ? Long.parseLong(parts[1]) : 0;",
                                                    "long frac = Long.parseLong(parts[1]);")})
    c.step("Compile", f"mkdir -p out && javac -d out $(find src/main/java -name '*.java') && "
           f"javac -cp out:{CP4} -d out $(find src/test/java -name '*.java')")
    c.step("Test", f"java -cp out:{CP4} org.junit.runner.JUnitCore com.acme.invoice.MoneyTest com.acme.invoice.InvoiceTest "
           "com.acme.invoice.TaxTableTest",
           causal=lambda o: find(o, r"^\d+\) \w+\(com\.acme", r"^(java\.\S+(Error|Exception)|org\.junit\.\S+)", r"at com\.acme\.invoice\.\w+(Test)?\.", limit=4))
    c.write(tool="junit4", category="test", made_by=f"{JAVAC}, JUnit 4.13.2 JUnitCore on make/java/gen.py:{name}, run here")


@case(ECO)
def junit_console_launcher(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "Invoice.java": INVOICE.replace("return net().percent(taxes.rate(region));",
                                                        "return net().percent(taxes.rate(region) - 1);"),
                  TST + "MoneyTest.java": None, TST + "InvoiceTest.java": None, TST + "TaxTableTest.java": None,
                  TST + "MoneyJupiterTest.java": JUPITER_TEST, TST + "InvoiceJupiterTest.java":
                  INVOICE_TEST.replace("org.junit.Assert", "org.junit.jupiter.api.Assertions").replace("import org.junit.Test;", "import org.junit.jupiter.api.Test;")
                  .replace("public class InvoiceTest", "class InvoiceJupiterTest")})
    jar = "/usr/share/java/junit-platform-console-standalone.jar"
    c.step("Compile", f"mkdir -p out && javac -d out $(find src/main/java -name '*.java') && "
           f"javac -cp out:{jar} -d out $(find src/test/java -name '*.java')")
    c.step("Test", f"java -jar {jar} --disable-banner --disable-ansi-colors --details=tree -cp out --scan-classpath",
           causal=lambda o: find(o, r"\w+\(\) ✘ ", r"^\s+JUnit Jupiter:\w+Test:\w+\(\)$", r"=> org\.opentest4j\.AssertionFailedError",
                                 r"com\.acme\.invoice\.\w+Test\.\w+\(\w+Test\.java:\d+\)", limit=3))
    c.write(tool="junit5", category="test", made_by=f"{JAVAC}, JUnit Platform Console Launcher 1.9.1 on make/java/gen.py:{name}, run here")


def module_pom(artifact: str, deps: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>com.acme</groupId><artifactId>invoice-parent</artifactId><version>1.4.0-SNAPSHOT</version></parent>
  <artifactId>{artifact}</artifactId>
  <dependencies>{deps}</dependencies>
</project>
"""


CLI_JAVA = """package com.acme.invoice.cli;

import com.acme.invoice.Invoice;
import com.acme.invoice.LineItem;
import com.acme.invoice.Money;
import com.acme.invoice.TaxTable;

public final class Main {
    public static void main(String[] args) {
        Invoice inv = new Invoice(args.length > 0 ? args[0] : "DE", new TaxTable());
        inv.add(new LineItem("A-1", 2, Money.parse("9.99")));
        System.out.println("net " + inv.net() + " tax " + inv.tax() + " gross " + inv.gross());
    }
}
"""


@case(ECO)
def reactor_module_fails(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    parent = pom(deps="").replace("<artifactId>invoice</artifactId>", "<artifactId>invoice-parent</artifactId>").replace(
        "<packaging>jar</packaging>", "<packaging>pom</packaging>\n  <modules><module>core</module><module>cli</module></modules>").replace(
        "<build>\n    <plugins>", "<build>\n    <pluginManagement><plugins>").replace("\n    </plugins>\n  </build>", "\n    </plugins></pluginManagement>\n  </build>")
    core_dep = "<dependency><groupId>com.acme</groupId><artifactId>invoice-core</artifactId><version>${project.version}</version></dependency>"
    c.files({"pom.xml": parent, "core/pom.xml": module_pom("invoice-core", JUNIT4), "cli/pom.xml": module_pom("invoice-cli", core_dep)})
    c.files({"core/" + SRC + f: t for f, t in (("Money.java", MONEY), ("LineItem.java", LINE), ("TaxTable.java", TAX), ("Invoice.java", INVOICE))})
    c.files({"core/" + TST + "MoneyTest.java": MONEY_TEST, "core/" + TST + "InvoiceTest.java": INVOICE_TEST,
             "cli/src/main/java/com/acme/invoice/cli/Main.java": CLI_JAVA.replace('System.out.println("net " + inv.net()', 'System.out.println("net " + inv.netTotal()')})
    setup(c)
    mvn(c, "verify", lambda o: compile_errors(o) + find(o, r"^\[INFO\] invoice-cli \.+ FAILURE", limit=1), ntp=True)
    c.write(tool="maven-compiler-plugin", category="build", made_by=made(name, ", a two-module reactor"))


@case(ECO)
def surefire_no_tests_matched(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c)
    setup(c)
    mvn(c, "verify -Dtest=InvoiceIT", lambda o: find(o, r"No tests were executed!|No tests matching pattern", limit=1), ntp=True)
    c.write(tool="maven-surefire-plugin", category="config", made_by=made(name))


# ---------------------------------------------------------------- added with make/kinds (corpus2): more failure kinds

@case(ECO)
def mvn_release_not_supported(name: str, shape: str) -> None:
    # the project asks for a newer JDK than the runner has: the build's setup, not its code, is wrong
    c = Case(ECO, name, shape, "invoice")
    project(c, pom().replace("<maven.compiler.release>17<", "<maven.compiler.release>21<"))
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"release version 21 not supported", limit=1), ntp=True)
    c.write(tool="maven-compiler-plugin", category="config", made_by=made(name, ", release 21 on JDK 17"))


@case(ECO)
def mvn_offline_not_downloaded(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c)
    setup(c)
    mvn(c, "-o verify", lambda o: find(o, r"^\[ERROR\] .*offline mode", limit=2), cold=True)
    c.write(tool="maven", category="dependency", made_by=made(name, ", -o with an empty local repository"))


HEAP_TEST = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

public class BulkInvoiceTest {
    @Test
    public void sumsManyLines() {
        List<LineItem> lines = new ArrayList<>();
        for (int i = 0; i < 5_000_000; i++) {
            lines.add(new LineItem("SKU-" + i, 1 + i % 7, Money.parse("1.25")));
        }
        Invoice inv = new Invoice("DE", new TaxTable());
        lines.forEach(inv::add);
        assertEquals(5_000_000, inv.lines().size());
    }
}
"""


@case(ECO)
def surefire_heap_oom(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    sure = "<configuration><argLine>-Xmx48m</argLine></configuration>"
    p = pom().replace(PLUGIN.format(a="maven-surefire-plugin", v="2.22.3", extra=""),
                      PLUGIN.format(a="maven-surefire-plugin", v="2.22.3", extra=sure))
    project(c, p, **{TST + "BulkInvoiceTest.java": HEAP_TEST})
    setup(c)
    mvn(c, "verify", lambda o: find(o, r"sumsManyLines\(com\.acme\.invoice\.BulkInvoiceTest\).*<<< ERROR!$", limit=1)
        + find(o, r"^java\.lang\.OutOfMemoryError", r"at com\.acme\.invoice\.BulkInvoiceTest\.", limit=1), ntp=True)
    c.write(tool="maven-surefire-plugin", category="infrastructure", made_by=made(name, ", JUnit 4.13.2, -Xmx48m"))


REPO_JAVA = HEADER + """package com.acme.invoice;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Tax rates loaded from a CSV file. */
public final class RateFile {
    private RateFile() {
    }

    public static List<String> load(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load rates from " + file, e);
        }
    }
}
"""
REPO_TEST = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;

import java.nio.file.Paths;
import org.junit.Test;

public class RateFileTest {
    @Test
    public void loadsBundledRates() {
        assertEquals(3, RateFile.load(Paths.get("src/test/resources/rates.csv")).size());
    }
}
"""


@case(ECO)
def surefire_caused_by_chain(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    project(c, **{SRC + "RateFile.java": REPO_JAVA, TST + "RateFileTest.java": REPO_TEST})
    setup(c)
    mvn(c, "verify -DtrimStackTrace=false",
        lambda o: surefire(o) + find(o, r"^Caused by: java\.nio\.file\.NoSuchFileException", limit=1), ntp=True)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", JUnit 4.13.2"))


@case(ECO)
def reactor_module_test_fails(name: str, shape: str) -> None:
    c = Case(ECO, name, shape, "invoice")
    parent = pom(deps="").replace("<artifactId>invoice</artifactId>", "<artifactId>invoice-parent</artifactId>").replace(
        "<packaging>jar</packaging>", "<packaging>pom</packaging>\n  <modules><module>core</module><module>cli</module></modules>").replace(
        "<build>\n    <plugins>", "<build>\n    <pluginManagement><plugins>").replace("\n    </plugins>\n  </build>", "\n    </plugins></pluginManagement>\n  </build>")
    core_dep = "<dependency><groupId>com.acme</groupId><artifactId>invoice-core</artifactId><version>${project.version}</version></dependency>"
    c.files({"pom.xml": parent, "core/pom.xml": module_pom("invoice-core", JUNIT4), "cli/pom.xml": module_pom("invoice-cli", core_dep)})
    c.files({"core/" + SRC + f: t for f, t in (("Money.java", MONEY.replace('"%d.%02d"', '"%d,%02d"')),
                                               ("LineItem.java", LINE), ("TaxTable.java", TAX), ("Invoice.java", INVOICE))})
    c.files({"core/" + TST + "MoneyTest.java": MONEY_TEST, "core/" + TST + "InvoiceTest.java": INVOICE_TEST,
             "cli/src/main/java/com/acme/invoice/cli/Main.java": CLI_JAVA})
    setup(c)
    mvn(c, "verify", surefire, context=lambda o: find(o, r"^\[ERROR\] Tests run: \d+, Failures: [1-9]", limit=1), ntp=True)
    c.write(tool="maven-surefire-plugin", category="test", made_by=made(name, ", a two-module reactor, JUnit 4.13.2"))
